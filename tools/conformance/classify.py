"""Reasons for programs that do not build, from the procedure or constant
they miss: `tern-info --coverage=missing` says which chapter a missing
procedure belongs to, and a chapter Tern has not started names its issue.
Everything else stays "unclassified" for a human."""
import re
import subprocess

# Chapters (MPI-5.0 numbering, as tern-info prints them) not implemented yet.
CHAPTERS = {
    8: "topo/MPI-4 #14: process topologies not implemented",
    12: "rma #13: one-sided communication not implemented",
    14: "io: MPI I/O not implemented",
    15: "MPI_T tools: the tool interface not implemented",
    19: "Fortran #15: language bindings (MPI_Type_create_f90_*, conversions of objects Tern lacks) not implemented",
}
SPAWN = re.compile(r"^MPI_(Comm_spawn|Comm_get_parent|Open_port|Close_port|Comm_accept|"
                   r"Comm_connect|Comm_join|Comm_disconnect|Publish_name|Unpublish_name|"
                   r"Lookup_name)")
SESSION = re.compile(r"^MPI_(Session\b|Session_|Group_from_session|Comm_create_from_group|"
                     r"Intercomm_create_from_groups)")
# Procedures new in MPI-4.0/4.1 (issue 14) in chapters Tern has started.
MPI4 = re.compile(r"^MPI_(Isendrecv|Isendrecv_replace|Comm_idup_with_info|Info_get_string|"
                  r"Info_create_env|Request_get_status_(all|any|some)|Type_get_value_index|"
                  r"(Comm|Session)_(attach|detach|flush|iflush)_buffer|Buffer_i?flush|"
                  r"Get_hw_resource_info|Status_(get|set)_(source|tag|error)|"
                  r"COMM_TYPE_HW_\w+)$")
# Constants (undeclared identifiers) of chapters not implemented yet.
CONSTANTS = [
    (re.compile(r"^MPI_(CART|GRAPH|DIST_GRAPH|UNWEIGHTED|WEIGHTS_EMPTY)"), CHAPTERS[8]),
    (re.compile(r"^MPI_(MODE_RDONLY|MODE_RDWR|MODE_WRONLY|MODE_CREATE|SEEK_|DISPLACEMENT_CURRENT|"
                r"DISTRIBUTE_)"), CHAPTERS[14]),
    (re.compile(r"^MPI_(LOCK_|MODE_|WIN_)"), CHAPTERS[12]),
    (re.compile(r"^MPI_T_"), CHAPTERS[15]),
    (re.compile(r"^MPI_(TYPECLASS_|(REAL|INTEGER|COMPLEX|LOGICAL)\d+$|2REAL|2INTEGER|"
                r"2DOUBLE_PRECISION|DOUBLE_PRECISION|CHARACTER|LOGICAL$)"), CHAPTERS[19]),
    (re.compile(r"^MPI_COMM_TYPE_HW_"), "topo/MPI-4 #14: MPI-4 constant not defined"),
    (re.compile(r"^MPI_(TYPE_NULL_|TYPE_DUP_FN)"),
     "Tern defect: datatype attributes (MPI_Type_create_keyval...) not implemented"),
]


def missing_procedures(tern_info):
    """{procedure: chapter number} from tern-info --coverage=missing."""
    try:
        text = subprocess.run([tern_info, "--coverage=missing"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    out, chapter = {}, None
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+)\.\s", line)
        if m:
            chapter = int(m.group(1))
            continue
        if chapter is not None and line.startswith("      "):
            for name in line.split():
                out[name.replace("(d)", "")] = chapter
    return out


def reason(why, missing):
    """A reason for a program that does not build, or None."""
    if "no mpi_f08 module" in why:
        return "Fortran: the mpi_f08 module is not implemented yet (being written)"
    m = re.search(r"undefined reference to (MPI_\w+)", why) or \
        re.search(r"[‘'`](MPI_\w+)[’']\s+undeclared", why) or \
        re.search(r"implicit declaration of function [‘'`](MPI_\w+)", why) or \
        re.search(r"^NotImplementedError.*\((MPI_\w+)\)$", why) or \
        re.search(r"unknown type name [‘'`](MPI_\w+)", why)
    if not m:
        return None
    sym = m.group(1)
    if SPAWN.match(sym):
        return f"spawn/dynamic processes: {sym} not implemented"
    if SESSION.match(sym):
        return f"topo/MPI-4 #14: sessions ({sym}) not implemented"
    if sym.startswith("MPI_T_"):
        return CHAPTERS[15]
    if MPI4.match(sym):
        return f"topo/MPI-4 #14: {sym} (MPI-4) not implemented"
    if sym in missing:
        ch = missing[sym]
        if ch in CHAPTERS:
            return CHAPTERS[ch]
        if sym.endswith("_c"):
            return f"topo/MPI-4 #14: large-count procedures ({sym}) not implemented"
        return f"Tern defect: {sym} not implemented"
    for pattern, text in CONSTANTS:
        if pattern.match(sym):
            return text
    return None
