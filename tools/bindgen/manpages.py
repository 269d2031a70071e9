#!/usr/bin/env python3
"""Man pages for every MPI procedure Tern implements, made at build time.

One page per procedure, man3/<name>.3 (a large-count form MPI_X_c is
described on MPI_X's page and gets a page that sources it), from:

  the MPI Forum's API data (pympistandard, as tools/bindgen/bindgen.py):
      the C prototypes (written as include/mpi.h writes them,
      checks.c_param), each parameter's direction and description
  src/mpi/gen/exports.txt          which procedures Tern implements
  src/mpi/gen/*.c                  each generated entry point: its argument
      checks in order, the object whose error handler gets the errors,
      whether it needs MPI to be initialised
  src/mpi, src/core, src/base      the error classes those checks raise: the
      MPI_ERR_ classes in the check functions and every function they call,
      and the TERN_ERR_ statuses they return mapped by tern_mpi_class_of
      (src/mpi/mpi_errors.c), with the class texts of that file
  tern-info --json                 the runtime knobs (src/base/knobs.def) and
      the collective algorithms with the built-in selection table

Nothing is written by hand per procedure: a page says what these sources
say and no more. tools/CMakeLists.txt runs this script after building
tern-info; cmake --install puts the pages in <prefix>/share/man/man3 (and
mpiexec.1 and tern-info.1, from their --help, in man1).

Usage: manpages.py --root SRC --tern-info BIN --mpiexec BIN --version V --out DIR
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chapters import CHAPTERS, chapter_of  # noqa: E402
import checks  # noqa: E402

try:
    import pympistandard as std
except ImportError:
    sys.exit("manpages: pympistandard is not installed (scripts/setup-deps.sh puts it in "
             ".venv/; configure with -DTERN_PYTHON=<a python that has it>)")

STANDARD = "MPI-5.0"


# ---- the Forum's data ---------------------------------------------------

def load_standard():
    """C name -> ISO C expression of every procedure, _c forms included."""
    std.use_api_version(1)
    procs = {}
    for p in std.PROCEDURES.values():
        c = p.express.iso_c
        if c is None:
            continue
        procs[c.name] = c
        if p.has_embiggenment():
            big = p.express.embiggen.iso_c
            procs[big.name] = big
    return procs


def latex_to_roff(text):
    """A description of the Forum's data (LaTeX macros) as roff text."""
    text = text.replace("\\MPI/", "MPI").replace("\\mpi/", "MPI").replace("\\RMA/", "RMA")
    text = re.sub(r"\\mbox\{([^{}]*)\}", r"\1", text)
    text = text.replace("\\_", "_")
    # Fonts as markers that survive the escaping below.
    text = re.sub(r"\\mpiarg\{([^{}]*)\}", "\x02\\1\x03", text)
    text = re.sub(r"\\(?:mpicode|mpiconst|mpifunc|code)\{([^{}]*)\}", "\x01\\1\x03", text)
    text = re.sub(r"\$([^$]*)\$", r"\1", text).replace("~", " ")
    return roff(text).replace("\x01", "\\fB").replace("\x02", "\\fI").replace("\x03", "\\fR")


def roff(text):
    """Text safe inside a roff line: backslashes and minus signs escaped."""
    return text.replace("\\", "\\e").replace("-", "\\-")


def roff_line(text):
    """A line of roff text that cannot be taken for a request."""
    text = roff(text)
    return "\\&" + text if text[:1] in (".", "'") else text


# ---- Tern's C sources ---------------------------------------------------

def strip_c(text):
    """C text without comments and with empty string and char literals, so
    braces and names inside them do not count."""
    out = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    out = re.sub(r"//[^\n]*", "", out)
    out = re.sub(r'"(\\.|[^"\\\n])*"', '""', out)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", out)


def matching(text, i, open_ch, close_ch):
    """Index just past the bracket that closes the one at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_ch:
            depth += 1
        elif text[j] == close_ch:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


# A function definition starts at the beginning of a line (the project's
# style): the return type, the name, the parameters, the body.
FUNC_DEF = re.compile(r"^[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\([^;{}()]*(?:\([^()]*\)[^;{}()]*)*\)"
                      r"\s*(?:__attribute__\s*\(\([^;{}]*?\)\)\s*)?\{", re.M)


def index_functions(paths):
    """Name -> body text (stripped) of every function defined in paths."""
    funcs = {}
    for path in paths:
        with open(path, errors="replace") as f:
            text = strip_c(f.read())
        pos = 0
        while True:
            m = FUNC_DEF.search(text, pos)
            if not m:
                break
            start = m.end() - 1
            end = matching(text, start, "{", "}")
            if m.group(1) not in ("if", "while", "for", "switch", "return"):
                funcs.setdefault(m.group(1), text[start:end])
            pos = end
    return funcs


class ErrorClasses:
    """The MPI error classes a piece of C code can raise, from the code."""

    # These turn a class or status they are given into an error; what they
    # raise is decided by their callers (the classes and statuses in the
    # caller's text), so the analysis does not look inside them.
    RAISERS = {"tern_mpi_error", "tern_mpi_raise", "tern_mpi_result", "tern_mpi_class_of",
               "invoke_handler", "tern_status_detail", "tern_status_callback"}

    def __init__(self, root):
        paths = [p for pat in ("src/mpi/*.c", "src/mpi/*.h", "src/core/**/*.c", "src/core/**/*.h",
                               "src/base/*.c", "src/base/*.h")
                 for p in sorted(glob.glob(os.path.join(root, pat), recursive=True))]
        self.funcs = index_functions(paths)
        with open(os.path.join(root, "src", "mpi", "mpi_errors.c")) as f:
            errors_c = f.read()
        # The status -> class map at the MPI boundary, and the class texts.
        body = self.funcs.get("tern_mpi_class_of", "")
        self.status_class = dict(re.findall(r"case\s+(TERN_\w+)\s*:\s*return\s+(MPI_\w+)\s*;", body))
        default = re.search(r"default\s*:\s*return\s+(MPI_\w+)\s*;", body)
        self.status_default = default.group(1) if default else "MPI_ERR_OTHER"
        self.class_text = dict(re.findall(r"\[(MPI_ERR_\w+)\]\s*=\s*\"([^\"]*)\"", errors_c))
        self.memo = {}

    def of_text(self, text, seen=frozenset()):
        classes = set(re.findall(r"\bMPI_ERR_\w+", text))
        for st in re.findall(r"\bTERN_ERR_\w+", text):
            classes.add(self.status_class.get(st, self.status_default))
        for name in set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", text)):
            if name in self.RAISERS or name in seen or name not in self.funcs:
                continue
            classes |= self.of_function(name, seen | {name})
        return classes

    def of_function(self, name, seen):
        if name not in self.memo:
            self.memo[name] = self.of_text(self.funcs[name], seen)
        return self.memo[name]


def entry_points(root):
    """PMPI name without prefix ('Send') -> the generated entry point's body."""
    entries = {}
    for path in sorted(glob.glob(os.path.join(root, "src", "mpi", "gen", "*.c"))):
        with open(path) as f:
            text = f.read()
        # TERN_FACE_NAME(x): an entry point an ABI face replaces (checks.py)
        for m in re.finditer(r"^\w[\w \t*]*\b(?:PMPI_(\w+)|TERN_FACE_NAME\((\w+)\))\(",
                             text, re.M):
            start = text.index("{", m.end())
            entries[m.group(1) or m.group(2)] = text[start:matching(text, start, "{", "}")]
    return entries


def entry_facts(body, params, errors):
    """What a generated entry point does: its checks (parameters, classes,
    check function), the expression naming the object whose handler gets
    the errors, whether it needs MPI initialised and holds the lock."""
    facts = {"init": "TERN_CHECK_INIT(" in body,
             "lock": "TERN_CHECK_INIT(" in body or "TERN_API_GUARD(" in body,
             "err_obj": None, "checks": []}
    m = re.search(r"const int err_obj = (.*);", body)
    if m:
        facts["err_obj"] = m.group(1)
    names = {p["name"] for p in params}
    stripped = strip_c(body)
    for m in re.finditer(r"\((err_?) = ", stripped):
        start = m.end()
        # The check expression runs to the parenthesis that closes "(err = ".
        end = matching(stripped, m.start(), "(", ")") - 1
        expr = stripped[start:end]
        used = []
        for tok in re.findall(r"[A-Za-z_]\w*", expr):
            x = tok[:-4] if tok.endswith("_obj") and tok[:-4] in names else tok
            if x in names and x not in used:
                used.append(x)
        call = re.match(r"\s*\(?\s*([A-Za-z_]\w*)\s*\(", expr)
        facts["checks"].append({"params": used, "classes": sorted(errors.of_text(expr)),
                                "function": call.group(1) if call else None})
    return facts


# ---- tern-info ----------------------------------------------------------

def tern_info_json(binary):
    """tern-info --json with no TERN_ variable of the build's environment in
    the way: defaults and the built-in table, whoever builds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TERN_", "FI_"))}
    # A sanitizer build's tern-info: leaks are the tests' business.
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    out = subprocess.run([binary, "--json"], env=env, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def tool_help(binary):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TERN_")}
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    return subprocess.run([binary, "--help"], env=env, check=True, capture_output=True,
                          text=True).stdout


# ---- pages --------------------------------------------------------------

DIRECTION = {"in": "IN", "out": "OUT", "inout": "INOUT"}


def params_of(expr):
    out = []
    for p in expr.parameters:
        ps = p._parseset
        decl = checks.c_param(p)
        ctype = re.sub(r"\b%s$" % re.escape(ps["name"]), "", decl).strip() \
            if ps["kind"] != "VARARGS" else "..."
        desc = ps["desc"] or ps["kind"].lower().replace("_", " ")
        out.append({"name": ps["name"] if ps["kind"] != "VARARGS" else "...",
                    "dir": ps["param_direction"], "type": ctype, "desc": desc,
                    "kind": ps["kind"]})
    return out


def prototype(expr):
    args = ", ".join(checks.c_param(p) for p in expr.parameters) or "void"
    return f"{expr.return_type} {expr.name}({args});"


def family_key(name, implemented):
    """MPI_Ibcast, MPI_Bcast_init and MPI_Bcast share 'bcast'; MPI_Rput and
    MPI_Put 'put' (when the shorter name is a procedure too)."""
    n = name[4:]
    if n.endswith("_c"):
        n = n[:-2]
    if n.endswith("_init") and "MPI_" + n[:-5] in implemented:
        n = n[:-5]
    if n[:1] in ("I", "R") and "MPI_" + n[1:2].upper() + n[2:] in implemented:
        n = n[1:]
    return n.lower()


def handler_sentence(expr, params):
    """Where an entry point's errors go, from its err_obj expression."""
    kinds = {p["name"]: p["kind"] for p in params}
    rest = ("(\\fBMPI_ERRORS_ARE_FATAL\\fR unless the program set another), which decides "
            "whether the call returns the error code.")
    if expr is None:
        # An entry point this script cannot read the handler from.
        return ("Errors go to the error handler of the object the call is about " + rest)
    if expr == "MPI_COMM_NULL":
        return ("The call is about no object: while the world model runs (after "
                "\\fBMPI_Init\\fR) its errors go to the error handler of "
                "\\fBMPI_COMM_WORLD\\fR " + rest[:-1] + "; otherwise the code is returned.")
    file_rest = ("(\\fBMPI_ERRORS_RETURN\\fR unless the program set another), which decides "
                 "whether the call returns the error code.")
    if expr == "MPI_FILE_NULL":
        return ("The call has no file: its errors go to the default file error handler, "
                "\\fBMPI_FILE_NULL\\fR's " + file_rest)
    named = [x for x in re.findall(r"\w+", expr) if x in kinds]
    if named and kinds[named[0]] == "ERRHANDLER":
        return f"Errors go to the error handler the call names, \\fI{named[0]}\\fR " + rest
    if named:
        what = kinds[named[0]].lower()
        return (f"Errors go to the error handler of the {what} \\fI{named[0]}\\fR "
                + (file_rest if what == "file" else rest))
    return f"Errors go to the error handler of {roff(expr)} " + rest


def knob_entry(k):
    default = f"\\fB{roff(k['default'])}\\fR" if k["default"] else "empty"
    lines = [".TP", f".B {k['name']}", f"{roff(k['type'])}, default {default}"
             + (f"; allowed: {roff(k['allowed'])}" if k["allowed"] else "") + ".",
             roff_line(k["doc"])]
    return lines


def page(name, big, procs, entries, errors, info, implemented, version, tools):
    base = procs[name]
    chapter = chapter_of(name)
    num, title = next((n, t) for s, n, t in CHAPTERS if s == chapter)
    params = params_of(base)
    big_params = {p["name"]: p for p in params_of(procs[big])} if big else {}
    out = [f'.TH {name} 3 "" "Tern {version}" "Tern MPI"',
           ".\\\" generated by tools/bindgen/manpages.py from the MPI Forum's API data and "
           "Tern's own tables; do not edit",
           ".nh", ".ad l", ".SH NAME",
           f"{name} \\- {roff(title)} ({STANDARD} chapter {num})",
           ".SH SYNOPSIS", ".nf", ".B #include <mpi.h>", ".PP",
           roff_line(prototype(base))]
    if big:
        out.append(roff_line(prototype(procs[big])))
    out += [".fi"]

    out += [".SH DESCRIPTION",
            f"\\fB{name}\\fR belongs to chapter {num}, {roff(title)}, of the {STANDARD} "
            "standard, which defines what it does; this page says how Tern provides it."]
    if big:
        out.append(f"\\fB{big}\\fR is its large\\-count form: the same call with "
                   "\\fBMPI_Count\\fR (or \\fBMPI_Aint\\fR) counts and displacements.")
    out.append(f"Tern exports it, and \\fBP{name}\\fR for profiling tools.")
    facts = entry_facts(entries.get(name[4:], ""), params, errors) if name[4:] in entries else None
    if facts is not None:
        if facts["init"]:
            out.append("It may be called only between \\fBMPI_Init\\fR (or the first "
                       "\\fBMPI_Session_init\\fR) and the end of MPI: called outside, it ends "
                       "the job with a message.")
        else:
            out.append("Its entry point does not require MPI to be initialised.")
        if facts["lock"]:
            out.append("Under \\fBMPI_THREAD_MULTIPLE\\fR it runs under Tern's global lock.")

    out.append(".SH PARAMETERS")
    if not params:
        out.append("None.")
    for p in params:
        t = p["type"]
        bp = big_params.get(p["name"])
        if bp and bp["type"] != t:
            t = f"{t}; {bp['type']} in {big}"
        out += [".TP", f".B {roff(p['name'])}",
                f"{DIRECTION.get(p['dir'], p['dir'].upper())} ({roff(t)}): {latex_to_roff(p['desc'])}"]

    out.append(".SH ERRORS")
    if base.return_kind.name != "ERROR_CODE":
        out.append(f"None: it returns a value of type \\fB{roff(base.return_type)}\\fR, "
                   "not an error code.")
    elif facts is not None and "tern_mpi_result(" not in entries[name[4:]] and \
            not facts["checks"]:
        out.append("Returns \\fBMPI_SUCCESS\\fR or the MPI error code its operation produced.")
    else:
        out.append("Returns \\fBMPI_SUCCESS\\fR or an error code. "
                   + handler_sentence(facts and facts["err_obj"], params))
        if facts and facts["checks"]:
            out += [".PP", "Tern checks the arguments in this order and raises the first "
                    "error it finds:"]
            for c in facts["checks"]:
                who = ", ".join(f"\\fI{roff(x)}\\fR" for x in c["params"]) or "the call"
                classes = ", ".join(f"\\fB{k}\\fR" for k in c["classes"]) or "none"
                out += [".TP", who, classes + (f" (\\fB{c['function']}\\fR)" if c["function"]
                                               else "")]
        out += [".PP", "Errors found after the checks pass (a failed peer, no memory, a "
                "message longer than the receive buffer...) are Tern statuses turned into "
                "MPI classes at the boundary (\\fBtern_mpi_class_of\\fR, "
                "src/mpi/mpi_errors.c)."]
        shown = sorted({k for c in (facts["checks"] if facts else []) for k in c["classes"]})
        if shown:
            out += [".PP", "The classes above:"]
            for k in shown:
                out += [".TP", f"\\fB{k}\\fR", roff(errors.class_text.get(k, ""))]

    # Collectives: the algorithms and the selection table; knobs.
    sel = info.get("collective_selection", {})
    kinds = {c["name"]: c for c in sel.get("collectives", [])}
    fam = family_key(name, implemented)
    coll = kinds.get(fam) if chapter == "coll" else None
    knob_names = set()
    if coll:
        out += [".SH ALGORITHMS",
                "Tern runs this collective as a schedule built by one of these algorithms "
                "(the first is the general fallback; the others serve only where noted):"]
        for a in coll["algorithms"]:
            out += [".TP", f".B {roff(a['name'])}", roff(a["condition"]) or "every call"]
        rows = [r for r in sel.get("table", []) if r["collective"] == fam]
        out += [".PP", f"The selection table ({roff(sel.get('table_source', ''))}): the first "
                "row whose limits the call meets and whose algorithm can serve it wins; "
                "\\fB*\\fR is any.", ".PP", ".nf",
                f"{'ranks <=':>10} {'bytes <=':>12}  algorithm"]
        for r in rows:
            mp = "*" if r["max_procs"] is None else str(r["max_procs"])
            mb = "*" if r["max_bytes"] is None else str(r["max_bytes"])
            out.append(roff_line(f"{mp:>10} {mb:>12}  {r['algorithm']}"))
        out += [".fi", ".PP",
                f"\\fB{coll['knob']}\\fR forces one by name; \\fBtern\\-info\\fR prints the "
                "table in effect."]
        knob_names.add(coll["knob"])
    # Knobs of the chapter's module (TERN_RMA_*, TERN_COLL_*, TERN_P2P_* for
    # point-to-point) and those whose text names this procedure.
    module = {"pt2pt": "P2P"}.get(chapter, chapter.upper())
    words = {name} | ({big} if big else set())
    knobs = [k for k in info.get("knobs", [])
             if k["name"] in knob_names or k["name"].startswith(f"TERN_{module}_")
             or any(re.search(r"\b%s\b" % re.escape(w), k["doc"]) for w in words)]
    if knobs:
        out += [".SH ENVIRONMENT", "Runtime knobs that apply (\\fBtern\\-info \\-\\-knobs\\fR "
                "lists them all with their current values):"]
        for k in knobs:
            out += knob_entry(k)

    family = sorted(n for n in implemented if n != name and n != big and not n.endswith("_c")
                    and family_key(n, implemented) == fam)
    refs = [f"\\fB{n}\\fR(3)" for n in family] + [f"\\fB{roff(t)}\\fR(1)" for t in tools]
    out += [".SH SEE ALSO", ", ".join(refs)]
    return "\n".join(out) + "\n"


def tool_page(tool, help_text, version):
    lines = help_text.splitlines() or [tool]
    usage = lines[0]
    # The summary: the paragraph after the usage line, to its first full stop.
    para = []
    for line in lines[1:]:
        if not line.strip():
            break
        para.append(line.strip())
    summary = re.split(r"(?<=\.)\s", " ".join(para))[0].rstrip(".")
    out = [f'.TH {tool} 1 "" "Tern {version}" "Tern MPI"',
           f".\\\" generated by tools/bindgen/manpages.py from {tool} --help; do not edit",
           ".SH NAME", f"{roff(tool)} \\- {roff(summary)}", ".SH SYNOPSIS",
           roff_line(usage.replace("Usage: ", "")), ".SH DESCRIPTION",
           f"The text of \\fB{roff(tool)} \\-\\-help\\fR:", ".PP", ".nf"]
    out += [roff_line(line) for line in lines[1:]]
    out += [".fi"]
    return "\n".join(out) + "\n"


def write(path, text):
    old = None
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if old != text:
        with open(path, "w") as f:
            f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--tern-info", required=True, help="the built tern-info")
    ap.add_argument("--mpiexec", help="the built mpiexec (for mpiexec.1)")
    ap.add_argument("--version", required=True)
    ap.add_argument("--out", required=True, help="directory that gets man1/ and man3/")
    args = ap.parse_args()
    root = os.path.abspath(args.root)

    procs = load_standard()
    with open(os.path.join(root, "src", "mpi", "gen", "exports.txt")) as f:
        implemented = [n for n in f.read().split() if n]
    implemented_set = set(implemented)
    unknown = [n for n in implemented if n not in procs]
    if unknown:
        sys.exit(f"manpages: not C procedures of {STANDARD}: {', '.join(unknown)}")
    entries = entry_points(root)
    missing = [n for n in implemented if n[4:] not in entries]
    if missing:
        sys.exit(f"manpages: no generated entry point in src/mpi/gen for {', '.join(missing)}")
    errors = ErrorClasses(root)
    info = tern_info_json(args.tern_info)

    man3 = os.path.join(args.out, "man3")
    man1 = os.path.join(args.out, "man1")
    os.makedirs(man3, exist_ok=True)
    os.makedirs(man1, exist_ok=True)
    tools = ["tern-info"] + (["mpiexec"] if args.mpiexec else [])
    for name in implemented:
        if name.endswith("_c") and name[:-2] in implemented_set:
            # Described on the base form's page.
            write(os.path.join(man3, name + ".3"), f".so man3/{name[:-2]}.3\n")
            continue
        big = name + "_c" if name + "_c" in implemented_set else None
        write(os.path.join(man3, name + ".3"),
              page(name, big, procs, entries, errors, info, implemented_set, args.version,
                   tools))
    write(os.path.join(man1, "tern-info.1"),
          tool_page("tern-info", tool_help(args.tern_info), args.version))
    if args.mpiexec:
        write(os.path.join(man1, "mpiexec.1"),
              tool_page("mpiexec", tool_help(args.mpiexec), args.version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
