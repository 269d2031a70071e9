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


# The sections a chapter's generated files are cut into, as ordered rules on
# the procedure name within the chapter (the first match wins; "" matches
# every name). Chapters not listed are one section. Files are named by
# chapter and section, never by position, so adding a procedure changes
# only its own section's file.
SECTIONS = {
    "pt2pt": [
        ("buffer", r"^MPI_(Buffer_|(Comm|Session)_(attach|detach|flush|iflush)_buffer)"),
        ("persistent", r"_init(_c)?$"),
        ("nonblocking", r"^MPI_I(b?send|ssend|rsend|recv|m?probe|mrecv|sendrecv)"),
        ("completion", r"^MPI_(Wait|Test|Request_|Cancel|Start|Status_|Get_count)"),
        ("blocking", r""),
    ],
    "datatype": [
        ("pack", r"^MPI_(Pack|Unpack)"),
        ("construct", r"^MPI_Type_(contiguous|vector|hvector|indexed|hindexed|struct|create_|"
                      r"dup|commit|free)"),
        ("query", r""),
    ],
    # Each kind of collective in two files, the all-to-all family
    # (allgather, allreduce, alltoall, reduce_scatter, the scans, barrier)
    # and the rooted ones (bcast, gather, scatter, reduce): one file of a
    # kind's mpi_f08 wrappers ran past 1,000 lines.
    "coll": [
        ("ops", r"^MPI_(Op_|Reduce_local)"),
        ("persistent_all", r"^MPI_(All|Reduce_scatter|Scan|Exscan|Barrier)\w*_init(_c)?$"),
        ("persistent_rooted", r"_init(_c)?$"),
        ("nonblocking_all", r"^MPI_I(all|reduce_scatter|scan|exscan|barrier)"),
        ("nonblocking_rooted", r"^MPI_I"),
        ("blocking_all", r"^MPI_(All|Reduce_scatter|Scan|Exscan|Barrier)"),
        ("blocking_rooted", r""),
    ],
    "comm": [
        ("group", r"^MPI_Group_"),
        ("caching", r"_(create_keyval|free_keyval|set_attr|get_attr|delete_attr|set_name|"
                    r"get_name)$|^MPI_(Keyval_|Attr_)"),
        ("comm", r""),
    ],
    "topo": [
        ("neighbor_alltoall", r"^MPI_I?[Nn]eighbor_alltoall"),
        ("neighbor_allgather", r"^MPI_I?[Nn]eighbor_"),
        ("cart", r"^MPI_(Cart|Dims_create)"),
        ("graph", r""),
    ],
    "rma": [
        ("window", r"^MPI_Win_(create|allocate|attach|detach|free$|get_group|set_info|get_info|"
                   r"shared_query)"),
        ("sync", r"^MPI_Win_"),
        ("ops", r""),
    ],
    "io": [
        ("shared", r"_(shared|ordered)(_begin|_end)?(_c)?$"),
        ("explicit", r"^MPI_File_i?(read|write)_at"),
        ("individual", r"^MPI_File_i?(read|write)"),
        ("file", r""),
    ],
    "tools": [
        ("cvar", r"^MPI_T_cvar_"),
        ("pvar", r"^MPI_T_pvar_"),
        ("event", r"^MPI_T_(event_|source_)"),
        ("general", r""),
    ],
}
_SECTION_RULES = {ch: [(name, re.compile(rx)) for name, rx in rules]
                  for ch, rules in SECTIONS.items()}


def section_of(name, slug=None):
    """The file key of C procedure `name`: its chapter's slug, or
    <slug>_<section> for chapters cut into sections."""
    slug = slug or chapter_of(name)
    for section, rx in _SECTION_RULES.get(slug, []):
        if rx.search(name):
            return f"{slug}_{section}"
    return slug


def file_groups(names, slug_of=None):
    """[(file key, [names])] in the standard's chapter order and each
    chapter's section order; names keep their order within a group."""
    order = []
    for slug, _, _ in CHAPTERS:
        rules = SECTIONS.get(slug)
        order += [f"{slug}_{s}" for s, _ in rules] if rules else [slug]
    groups = {}
    for n in names:
        slug = slug_of(n) if slug_of else chapter_of(n)
        groups.setdefault(section_of(n, slug), []).append(n)
    rank = {k: i for i, k in enumerate(order)}
    return sorted(groups.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))
