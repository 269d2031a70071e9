"""The chapter of MPI-5.0 each C procedure belongs to.

The MPI Forum's API data (pympistandard) carries no chapter, so the
classification lives here, as ordered rules on the procedure name: the first
rule that matches wins. Deprecated procedures stay in the chapter of their
topic (the coverage report marks them)."""

import re

# (slug, number, title), in the standard's order.
CHAPTERS = [
    ("pt2pt", 3, "Point-to-Point Communication"),
    ("part", 4, "Partitioned Point-to-Point Communication"),
    ("datatype", 5, "Datatypes"),
    ("coll", 6, "Collective Communication"),
    ("comm", 7, "Groups, Contexts, Communicators, and Caching"),
    ("topo", 8, "Process Topologies"),
    ("env", 9, "MPI Environmental Management"),
    ("info", 10, "The Info Object"),
    ("proc", 11, "Process Initialization, Creation, and Management"),
    ("rma", 12, "One-Sided Communications"),
    ("ext", 13, "External Interfaces"),
    ("io", 14, "I/O"),
    ("tools", 15, "Tool Support"),
    ("lang", 19, "Language Bindings"),
    ("abi", 20, "Application Binary Interface (ABI)"),
]

_RULES = [
    # Handle conversions and Fortran support before the object prefixes.
    (r"_(c2f|f2c|c2f08|f082c|f2f08|f082f)$", "lang"),
    (r"^MPI_Type_(create_f90_|match_size)", "lang"),
    (r"^MPI_Abi_|_(toint|fromint)$", "abi"),
    # Error handlers, whatever object they belong to, and error codes.
    (r"errhandler|^MPI_Errhandler_", "env"),
    (r"^MPI_(Add|Remove)_error_|^MPI_Error_", "env"),
    (r"^MPI_(Get_version|Get_library_version|Get_processor_name|Get_hw_resource_info|"
     r"Alloc_mem|Free_mem|Wtime|Wtick)$", "env"),
    # Caching and naming (chapter 7) for every kind of object.
    (r"_(create_keyval|free_keyval|set_attr|get_attr|delete_attr|set_name|get_name)$", "comm"),
    (r"^MPI_(Keyval_create|Keyval_free|Attr_put|Attr_get|Attr_delete)$", "comm"),
    # Buffered-send buffers of communicators and sessions are point-to-point.
    (r"^MPI_(Comm|Session)_(attach_buffer|detach_buffer|flush_buffer|iflush_buffer)(_c)?$", "pt2pt"),
    (r"^MPI_(Buffer_|Bsend|Ibsend)", "pt2pt"),
    # Process creation and management.
    (r"^MPI_(Init|Init_thread|Finalize|Initialized|Finalized|Abort|Query_thread|"
     r"Is_thread_main)$", "proc"),
    (r"^MPI_Session_", "proc"),
    (r"^MPI_(Comm_spawn|Comm_spawn_multiple|Comm_get_parent|Comm_accept|Comm_connect|"
     r"Comm_disconnect|Comm_join|Open_port|Close_port|Publish_name|Unpublish_name|"
     r"Lookup_name|Group_from_session_pset|Comm_create_from_group|"
     r"Intercomm_create_from_groups)$", "proc"),
    # Topologies and neighbourhood collectives.
    (r"^MPI_(Cart|Graph|Dist_graph|Dims_create|Topo_test|Cartdim_get|Graphdims_get|"
     r"Neighbor_|Ineighbor_)", "topo"),
    (r"^MPI_Info_", "info"),
    (r"^MPI_(Win_|Put|Get$|Get_c$|Accumulate|Get_accumulate|Fetch_and_op|"
     r"Compare_and_swap|Rput|Rget|Raccumulate|Rget_accumulate)", "rma"),
    (r"^MPI_(File_|Register_datarep)", "io"),
    (r"^MPI_(T_|Pcontrol)", "tools"),
    (r"^MPI_(Grequest_|Status_set_elements|Status_set_cancelled)", "ext"),
    (r"^MPI_(Psend_init|Precv_init|Pready|Parrived)", "part"),
    (r"^MPI_(Type_|Get_address|Aint_|Get_elements|Pack|Unpack)", "datatype"),
    (r"^MPI_(Group_|Comm_|Intercomm_)", "comm"),
    (r"^MPI_(Op_|Reduce_local)", "coll"),
    (r"^I?(MPI_)?(Barrier|Bcast|Gather|Gatherv|Scatter|Scatterv|Allgather|Allgatherv|"
     r"Alltoall|Alltoallv|Alltoallw|Reduce|Allreduce|Reduce_scatter|Reduce_scatter_block|"
     r"Scan|Exscan)(_init)?(_c)?$", "coll"),
    (r"^MPI_I(barrier|bcast|gather|gatherv|scatter|scatterv|allgather|allgatherv|"
     r"alltoall|alltoallv|alltoallw|reduce|allreduce|reduce_scatter|reduce_scatter_block|"
     r"scan|exscan)(_c)?$", "coll"),
    (r"^MPI_(Barrier|Bcast|Gather|Gatherv|Scatter|Scatterv|Allgather|Allgatherv|"
     r"Alltoall|Alltoallv|Alltoallw|Reduce|Allreduce|Reduce_scatter|Reduce_scatter_block|"
     r"Scan|Exscan)(_init)?(_c)?$", "coll"),
    # Everything else of messages, requests and statuses.
    (r"^MPI_(Send|Recv|Ssend|Rsend|Isend|Irecv|Issend|Irsend|Sendrecv|Isendrecv|"
     r"Probe|Iprobe|Mprobe|Improbe|Mrecv|Imrecv|Wait|Test|Request_|Cancel|Start|"
     r"Get_count|Recv_init|Send_init|Ssend_init|Rsend_init|Status_)", "pt2pt"),
]
_COMPILED = [(re.compile(rx), slug) for rx, slug in _RULES]


def chapter_of(name):
    """The slug of the chapter of C procedure `name` (MPI_Xxx or MPI_Xxx_c)."""
    for rx, slug in _COMPILED:
        if rx.search(name):
            return slug
    raise KeyError(f"{name}: no chapter rule matches; add one to tools/bindgen/chapters.py")
