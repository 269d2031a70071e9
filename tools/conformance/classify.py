"""Reasons for programs that do not build, from the procedure or constant
they miss: `tern-info --coverage=missing` says which chapter a missing
procedure belongs to, and a chapter Tern has not started names its issue.
Everything else stays "unclassified" for a human."""
import re
import subprocess

# Chapters (MPI-5.0 numbering, as tern-info prints them) not implemented yet.
CHAPTERS = {
    4: "part: partitioned communication not implemented",
    8: "topo/MPI-4 #14: process topologies not implemented",
    12: "rma #13: one-sided communication not implemented",
    14: "io: MPI I/O not implemented",
    15: "MPI_T tools: the tool interface not implemented",
    19: "Fortran #15: language bindings (f2c/c2f, Fortran types) not implemented",
}
SPAWN = re.compile(r"^MPI_(Comm_spawn|Comm_get_parent|Open_port|Close_port|Comm_accept|"
                   r"Comm_connect|Comm_join|Comm_disconnect|Publish_name|Unpublish_name|"
                   r"Lookup_name)")
SESSION = re.compile(r"^MPI_(Session_|Group_from_session|Comm_create_from_group)")
# Constants (undeclared identifiers) of chapters not implemented yet.
CONSTANTS = [
    (re.compile(r"^MPI_(CART|GRAPH|DIST_GRAPH|UNWEIGHTED|WEIGHTS_EMPTY)"), CHAPTERS[8]),
    (re.compile(r"^MPI_(MODE_RDONLY|MODE_RDWR|MODE_WRONLY|MODE_CREATE|SEEK_|DISPLACEMENT_CURRENT|"
                r"DISTRIBUTE_)"), CHAPTERS[14]),
    (re.compile(r"^MPI_(LOCK_|MODE_|WIN_)"), CHAPTERS[12]),
    (re.compile(r"^MPI_T_"), CHAPTERS[15]),
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
    m = re.search(r"undefined reference to (MPI_\w+)", why) or \
        re.search(r"[‘'`](MPI_\w+)[’']\s+undeclared", why) or \
        re.search(r"implicit declaration of function [‘'`](MPI_\w+)", why) or \
        re.search(r"^NotImplementedError.*\((MPI_\w+)\)$", why)
    if not m:
        return None
    sym = m.group(1)
    if SPAWN.match(sym):
        return f"spawn/dynamic processes: {sym} not implemented"
    if SESSION.match(sym):
        return f"topo/MPI-4 #14: sessions ({sym}) not implemented"
    if sym.startswith("MPI_T_"):
        return CHAPTERS[15]
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
