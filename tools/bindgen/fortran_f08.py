"""The `mpi_f08` module from the MPI Forum's f08 forms of the procedures.

For every procedure Tern implements in C (the specs) whose f08 form the data
has, and for its large-count `_c` form when Tern implements that, writes:

  src/fortran/gen/mpi_f08_module.f90  module mpi_f08: the handle types
      (TYPE(MPI_Comm)... with INTEGER :: MPI_VAL, the `mpi` module's handle),
      TYPE(MPI_Status) with MPI_Status's layout, == and /= on handles, every
      constant of mpi.h (handles as named constants of their types), the
      sentinels (the `mpi` module's common blocks), the callbacks' ABSTRACT
      INTERFACEs, and one module procedure per f08 form (MPI_Send_f08,
      MPI_Send_c_f08 under the generic MPI_Send) with the standard's
      declarations verbatim: optional IERROR, LOGICALs converted to C ints,
      strings passed with their lengths, procedures as C function pointers.
  src/fortran/gen/f08_wrappers_<section>.c  C functions (BIND(C) targets) for the
      forms that take a choice buffer, TYPE(C_PTR) or a large count: a
      buffer arrives as its CFI descriptor (TYPE(*), DIMENSION(..)) and
      tern_f08_section turns it into an address, or, for a non-contiguous
      array section, a derived datatype over the user's, or in a blocking
      call a contiguous copy (src/fortran/f08_support.c).

A form with neither calls the `mpi` binding's C function (mpi_comm_rank_,
src/fortran/gen/wrappers*.c or fortran_special.c) through a BIND(C)
interface: the f08 handle types and TYPE(MPI_Status) have the layout of
the `mpi` module's INTEGERs, so the arguments pass as they are."""

import re

import pympistandard as std

import fortran
from chapters import file_groups

NOTE = fortran.NOTE

HANDLES = ["Comm", "Datatype", "Group", "Request", "Op", "Errhandler", "Info", "Message",
           "Win", "Session", "File"]

# Predefined callbacks (fortran_special.c defines them with Fortran's
# conventions), with the abstract interface each has in mpi_f08.
F08_CALLBACKS = {
    "MPI_COMM_NULL_COPY_FN": "MPI_Comm_copy_attr_function",
    "MPI_COMM_DUP_FN": "MPI_Comm_copy_attr_function",
    "MPI_COMM_NULL_DELETE_FN": "MPI_Comm_delete_attr_function",
    "MPI_TYPE_NULL_COPY_FN": "MPI_Type_copy_attr_function",
    "MPI_TYPE_DUP_FN": "MPI_Type_copy_attr_function",
    "MPI_TYPE_NULL_DELETE_FN": "MPI_Type_delete_attr_function",
    "MPI_WIN_NULL_COPY_FN": "MPI_Win_copy_attr_function",
    "MPI_WIN_DUP_FN": "MPI_Win_copy_attr_function",
    "MPI_WIN_NULL_DELETE_FN": "MPI_Win_delete_attr_function",
}

# Fortran type of the f08 form -> (type in the BIND(C) interface, C type
# of the pointer the C function receives).
SCALAR = {
    "INTEGER": ("INTEGER(C_INT)", "MPI_Fint"),
    "LOGICAL": ("INTEGER(C_INT)", "MPI_Fint"),
    "INTEGER(KIND=MPI_ADDRESS_KIND)": ("INTEGER(C_INT64_T)", "MPI_Aint"),
    "INTEGER(KIND=MPI_OFFSET_KIND)": ("INTEGER(C_INT64_T)", "MPI_Offset"),
    "INTEGER(KIND=MPI_COUNT_KIND)": ("INTEGER(C_INT64_T)", "MPI_Count"),
    "DOUBLE PRECISION": ("REAL(C_DOUBLE)", "double"),
    "TYPE(MPI_Status)": ("TYPE(MPI_Status)", "MPI_Fint"),
    "TYPE(C_PTR)": ("TYPE(C_PTR)", "void *"),
}
for _h in HANDLES:
    SCALAR[f"TYPE(MPI_{_h})"] = (f"TYPE(MPI_{_h})", "MPI_Fint")

BUFFER = "TYPE(*), DIMENSION(..)"

# Procedures whose buffer is only an address: a section's is its first
# element's.
ADDRESS_ONLY = {"MPI_Get_address"}


class Skip(Exception):
    """A form this generator cannot bind, with the reason."""


# ---------------------------------------------------------------------------
# Reading the data's f08 text.

def _split_names(text):
    """'a, b(count), c(2, n)' -> ['a', 'b(count)', 'c(2, n)']."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _decls(form):
    """The declaration lines of an f08 form (USE lines dropped: the module
    uses ISO_C_BINDING) and {lower name: dimensions text or ''}."""
    lines = [x.strip() for x in str(form).splitlines()[1:] if x.strip()]
    lines = [x for x in lines if not x.startswith("USE")]
    dims = {}
    for line in lines:
        _, names = line.split("::")
        for n in _split_names(names):
            m = re.match(r"^(\w+)\s*(\(.*\))?$", n)
            dims[m.group(1).lower()] = m.group(2) or ""
    return lines, dims


def _c_params(cexpr):
    return {q._parseset["name"]: q for q in cexpr.parameters}


# ---------------------------------------------------------------------------
# The pairs (count, datatype) a choice buffer is described by.

def _pair(buf, names):
    """(count, datatype) parameter names describing the buffer `buf`, or None."""
    stem = re.sub(r"(buf|_addr|addr)$", "", buf)
    counts = [f"{stem}count", f"{stem}_count", "count"]
    types = [f"{stem}type", f"{stem}_datatype", f"{stem}datatype", "datatype"]
    c = next((x for x in counts if x in names), None)
    t = next((x for x in types if x in names), None)
    return (c, t) if c and t else None


# ---------------------------------------------------------------------------
# One f08 form.

class Form:
    """One f08 form of a procedure: the module procedure and, when it needs
    one, its C function."""

    def __init__(self, proc, form, cexpr, big, wrapped):
        self.proc, self.form, self.cexpr, self.big = proc, form, cexpr, big
        self.cname = cexpr.name                     # MPI_Send_c
        self.fname = form.name                      # MPI_Send (the generic)
        # The standard's specific names (MPI-4.1 19.1.5): _f08ts for the
        # forms with a TYPE(*), DIMENSION(..) buffer, _f08 for the others.
        has_ts = any(q.type == BUFFER for q in form.parameters)
        self.specific = self.cname + ("_f08ts" if has_ts else "_f08")  # MPI_Send_c_f08ts
        self.func = form.return_type.strip() if form.return_type else None
        self.params = [q for q in form.parameters]
        self.lines, self.dims = _decls(form)
        has_buf = any(q.type == BUFFER for q in self.params)
        has_ptr = any(q.type == "TYPE(C_PTR)" for q in self.params)
        self.own_c = big or has_buf or has_ptr or self.cname not in wrapped
        for q in self.params:
            t = q.type or ""
            if t in SCALAR or t == BUFFER or t.startswith("PROCEDURE") or t == "CHARACTER":
                continue
            raise Skip(f"no f08 rule for {q.name} of type {t}")
        for q in self.params:
            # An array of strings (the spawns' argv) passes, like the `mpi`
            # binding's, as its characters in sequence with the length of
            # one element: only to that binding's C function.
            if q.type == "CHARACTER" and self.dims[q.name.lower()] and self.own_c:
                raise Skip(f"array of strings {q.name}")

    def c_target(self, prefix=""):
        """The C function the procedure calls; prefix "P": the PMPI_ one."""
        if self.own_c:
            return (("tern_pf08_" if prefix else "tern_f08_") + self.cname[4:]).lower()
        return (prefix + self.cname).lower() + "_"

    def signature(self):
        return [SCALAR.get(q.type, (q.type,))[0] + self.dims[q.name.lower()][:1]
                for q in self.params]

    # -- Fortran --------------------------------------------------------

    def _bind_decl(self, q):
        x = q.name.lower()
        dims = "(*)" if self.dims[x] else ""
        t = q.type
        if t == BUFFER:
            asy = ", ASYNCHRONOUS" if q.asynchronous else ""
            return [f"TYPE(*), DIMENSION(..){asy} :: {x}"]
        if t == "CHARACTER":
            return [f"CHARACTER(KIND=C_CHAR) :: {x}(*)"]
        if t == "LOGICAL" and self.dims[x] == "(*)":
            # No length to convert it by (MPI_Cart_sub's remain_dims):
            # gfortran's LOGICALs are C's 1 and 0 already.
            return [f"TYPE(*), DIMENSION(*) :: {x}"]
        if t.startswith("PROCEDURE"):
            return [f"TYPE(C_FUNPTR), VALUE :: {x}"]
        return [f"{SCALAR[t][0]} :: {x}{dims}"]

    def _head(self, prefix):
        args = [q.name.lower() for q in self.params]
        kw = "FUNCTION" if self.func else "SUBROUTINE"
        res = " RESULT(tern_res)" if self.func else ""
        return kw, f"{kw} {prefix}{self.specific}({', '.join(args)}){res}"

    def interface(self, prefix=""):
        """The interface body of the specific procedure (module mpi_f08)."""
        kw, head = self._head(prefix)
        out = [head, "  IMPORT", "  IMPLICIT NONE"]
        if self.func:
            out.append(f"  {self.func} :: tern_res")
        out += ["  " + x for x in self.lines]
        out.append(f"END {kw} {prefix}{self.specific}")
        return out

    def fortran(self, prefix=""):
        """The specific procedure, an external one (a profiling library can
        replace MPI_Send_f08ts and call PMPI_Send)."""
        kw, head = self._head(prefix)
        out = [head, "  USE MPI_F08_TYPES", "  USE, INTRINSIC :: ISO_C_BINDING", "  IMPLICIT NONE"]
        if self.func:
            out.append(f"  {self.func} :: tern_res")
        out += ["  " + x for x in self.lines]
        locals_, pre, post, call, cargs, lens = [], [], [], [], [], []
        has_ierror = False
        for q in self.params:
            x = q.name.lower()
            if x == "ierror":
                has_ierror = True
                locals_.append("INTEGER(C_INT) :: tern_ierror")
                cargs.append("ierror")
                call.append("tern_ierror")
                continue
            cargs.append(x)
            if q.type == "LOGICAL" and self.dims[x] == "(*)":
                call.append(x)
            elif q.type == "LOGICAL":
                d = self.dims[x]
                shape = f"(SIZE({x}))" if d else ""
                locals_.append(f"INTEGER(C_INT) :: {x}_c{shape}")
                if q.intent != "INTENT(OUT)":
                    pre.append(f"{x}_c = MERGE(1_C_INT, 0_C_INT, {x})")
                if q.intent != "INTENT(IN)":
                    post.append(f"{x} = {x}_c /= 0")
                call.append(f"{x}_c")
            elif q.type == "CHARACTER":
                call.append(x)
                lens.append((f"{x}_len", f"LEN({x}, KIND=C_SIZE_T)"))
            elif q.type.startswith("PROCEDURE"):
                call.append(f"C_FUNLOC({x})")
            else:
                call.append(x)
        bind = [f"{kw} tern_c({', '.join(cargs + [n for n, _ in lens])}) "
                f"BIND(C, name=\"{self.c_target(prefix)}\")", "  IMPORT"]
        if self.func:
            bind.append(f"  {SCALAR[self.func][0]} :: tern_c")
        for q in self.params:
            bind += ["  " + d for d in self._bind_decl(q)]
        bind += [f"  INTEGER(C_SIZE_T), VALUE :: {n}" for n, _ in lens]
        bind.append(f"END {kw} tern_c")
        out += ["  " + x for x in locals_]
        out.append("  INTERFACE")
        out += ["    " + x for x in bind]
        out.append("  END INTERFACE")
        out += ["  " + x for x in pre]
        all_call = ", ".join(call + [e for _, e in lens])
        if self.func:
            out.append(f"  tern_res = tern_c({all_call})")
        else:
            out.append(f"  CALL tern_c({all_call})")
        out += ["  " + x for x in post]
        if has_ierror:
            out.append("  IF (PRESENT(ierror)) ierror = tern_ierror")
        out.append(f"END {kw} {prefix}{self.specific}")
        return out

    # -- C --------------------------------------------------------------

    def c(self, prefix=""):
        """The C function of a form that needs its own (own_c); prefix "P":
        the one PMPI_<name>_f08ts calls, which calls PMPI_<name>."""
        cparams = _c_params(self.cexpr)
        names = {q.name.lower() for q in self.params}
        scalar_int = {q.name.lower() for q in self.params
                      if q.type in ("INTEGER", "INTEGER(KIND=MPI_COUNT_KIND)")
                      and not self.dims[q.name.lower()]}
        dtypes = {q.name.lower() for q in self.params
                  if q.type == "TYPE(MPI_Datatype)" and not self.dims[q.name.lower()]}
        bufs = [q.name.lower() for q in self.params if q.type == BUFFER]
        pairs = {}
        for b in bufs:
            p = _pair(b, names)
            pairs[b] = p if p and p[0] in scalar_int and p[1] in dtypes else None
        # One (count, datatype) for two buffers (MPI_Reduce's): a section
        # may have it only while the others are MPI_IN_PLACE.
        sharers = {b: [o for o, q in pairs.items() if o != b and q and q == p]
                   for b, p in pairs.items()}
        paired = {}
        for b, p in pairs.items():
            if p:
                paired[p[0]] = b
                paired[p[1]] = b
        errobj = next(((q.name.lower(), q.type[9:-1]) for q in self.params
                       if q.type in ("TYPE(MPI_Comm)", "TYPE(MPI_Win)")
                       and not self.dims[q.name.lower()]), None)
        args, lens, decls, pre, post, call = [], [], [], [], [], []
        for q in self.params:
            x = q.name.lower()
            if x == "ierror":
                args.append("MPI_Fint *ierror")
                continue
            cp = cparams[x]
            ctype, _, is_array = fortran._cdecl_parts(cp)
            kind = cp._parseset["kind"]
            t = q.type
            if t == BUFFER:
                args.append(f"CFI_cdesc_t *{x}")
                decls.append(f"tern_f08_section_t {x}_s = {{0}};")
                p = pairs[x]
                cnt = f"&{p[0]}_c" if p else "NULL"
                typ = f"&{p[1]}_c" if p else "NULL"
                if p and sharers[x]:
                    cond = " && ".join(f"tern_f08_in_place({o})" for o in sharers[x])
                    cnt, typ = f"{cond} ? {cnt} : NULL", f"{cond} ? {typ} : NULL"
                if self.cname in ADDRESS_ONLY:
                    flags = "TERN_F08_ADDRESS"
                elif q.asynchronous:
                    flags = "0"  # the user's memory itself, or refused
                else:
                    flags = "TERN_F08_COPY_IN" + (" | TERN_F08_COPY_OUT"
                                                  if q.intent != "INTENT(IN)" else "")
                pre.append(f"if ((*ierror = tern_f08_section({x}, {cnt}, {typ}, {flags}, "
                           f"&{x}_s, \"{self.cname}\", \"{x}\")) != MPI_SUCCESS) goto out;")
                post.append(f"tern_f08_section_done(&{x}_s);")
                call.append(f"{x}_s.addr")
                continue
            if t == "CHARACTER":
                args.append(f"char *{x}")
                lens.append(f"size_t {x}_len")
                decls.append(f"char *{x}_c = NULL;")
                if "const" in ctype:
                    pre.append(f"if (!({x}_c = tern_f_str_in({x}, {x}_len))) {{ *ierror = "
                               "MPI_ERR_NO_MEM; goto out; }")
                else:
                    pre.append(f"if (!({x}_c = tern_f_str_buf({x}_len))) {{ *ierror = "
                               "MPI_ERR_NO_MEM; goto out; }")
                    post.append(f"if (*ierror == MPI_SUCCESS) tern_f_str_out({x}, {x}_len, {x}_c);")
                post.append(f"free({x}_c);")
                call.append(f"{x}_c")
                continue
            if t.startswith("PROCEDURE"):
                args.append(f"void (*{x})(void)")
                # MPICH's MPI_CONVERSION_FN_NULL is a procedure of its own
                # (libmpichfort.so.12): C's NULL (fortran_support.h).
                conv = "conversion_fn" in x
                call.append(f"({ctype})TERN_F08_CONV({x})" if conv else f"({ctype}){x}")
                continue
            fct = SCALAR[t][1]
            if t == "TYPE(C_PTR)":
                args.append(f"void **{x}")
                call.append(f"{x}" if q.intent != "INTENT(IN)" else f"*{x}")
                continue
            args.append(f"{fct} *{x}")
            if "MPI_F08_status" in ctype:
                call.append(f"({ctype}){x}")
                continue
            fortran._check_width(self.cname, x, fct, ctype)
            if x in paired:
                # The pair may become (1, a datatype of the section).
                ct = "MPI_Count" if t.startswith("INTEGER") else "MPI_Datatype"
                decls.append(f"{ct} {x}_c = *{x};")
                call.append(f"({re.sub(r'const', '', ctype).strip()}){x}_c")
                continue
            if kind == "STATUS" and "const" not in ctype:
                call.append(f"tern_f_statuses({x})" if is_array else f"tern_f_status({x})")
            elif kind == "WEIGHT" and q.intent == "INTENT(IN)":
                call.append(f"tern_f_weights({x})")
            elif kind == "ERROR_CODE" and is_array:
                call.append(f"tern_f_errcodes({x})")
            elif "*" in ctype or is_array:
                call.append(f"({ctype}){x}")
            else:
                call.append(f"*{x}")
        if self.func:
            raise Skip("a function with its own C form")
        all_args = ", ".join(args + lens)
        target = self.c_target(prefix)
        body = [f"void {target}({all_args});", f"void {target}({all_args})", "{"]
        body += ["    " + x for x in decls + pre]
        body.append(f"    *ierror = {prefix}{self.cname}({', '.join(call)});")
        if any("goto out" in x for x in pre):
            body.append("out:")
            if not post:
                body.append("    ;")
        body += ["    " + x for x in post]
        if bufs:
            kind, obj = (errobj[1], f"*{errobj[0]}") if errobj else ("Comm", "MPI_COMM_WORLD")
            body.append(f"    *ierror = tern_f08_raise_{kind.lower()}({obj}, *ierror);")
        body.append("}")
        return "\n".join(body)


# ---------------------------------------------------------------------------

def _forms(specs):
    """[Form] of every implemented procedure, and [(name, reason)] left out."""
    implemented = {n for ch in specs.values() for n in ch["procs"]}
    fprocs, _ = fortran.fortran_procs(specs)
    wrapped = set(fprocs)
    forms, left = [], []
    for name in sorted(implemented):
        if name.endswith("_c"):
            continue
        p = std.PROCEDURES.get(name.lower())
        if p is None or p.express.f08 is None:
            continue
        cands = [(p.express.f08, p.express.iso_c, False)]
        if p.has_embiggenment() and p.express.embiggen.iso_c.name in implemented:
            cands.append((p.express.embiggen.f08, p.express.embiggen.iso_c, True))
        for f, c, big in cands:
            if f is None:
                continue
            try:
                form = Form(p, f, c, big, wrapped)
                if big and forms and forms[-1].proc is p and \
                        forms[-1].signature() == form.signature():
                    # MPI_ADDRESS_KIND and MPI_COUNT_KIND are one kind: a
                    # generic cannot tell the forms apart; the large one
                    # is MPI_Type_get_extent_c.
                    form.fname = form.cname
                if form.own_c:
                    form.c()  # its C must be writable too
                forms.append(form)
            except Skip as e:
                left.append((c.name, str(e)))
    return forms, left


_DEF = re.compile(r"^#define (MPI_\w+) (?:\(\((MPI_\w+)\)(0x[0-9a-fA-F]+|-?\d+)\)|"
                  r"\(?(0x[0-9a-fA-F]+|-?\d+)\)?|(MPI_\w+))\s*(?:/\*.*)?$")


def _constants(header_text):
    """[(name, handle type or None, value)] of mpi.h's integer constants."""
    values, order = {}, []
    for line in header_text.splitlines():
        m = _DEF.match(line.strip())
        if not m:
            continue
        name, cast, v1, v2, alias = m.groups()
        if name.startswith("MPI_F_") or name == "MPI_VERSION_STRING":
            continue
        if cast and cast[4:] not in HANDLES:
            continue
        if alias:
            if alias not in values:
                continue
            t, v = values[alias]
        else:
            t, v = (cast[4:] if cast else None), int(v1 or v2, 0)
        if v >= 2 ** 31:
            v -= 2 ** 32
        if name not in values:
            order.append(name)
        values[name] = (t, v)
    return [(n,) + values[n] for n in order]


def _abstract_interfaces():
    out = ["ABSTRACT INTERFACE"]
    for cb in std.CALLBACKS.values():
        forms = [cb.express.f08]
        if cb.has_embiggenment():
            forms.append(cb.express.embiggen.f08)
        for f in forms:
            if f is None:
                continue
            lines = [x.strip() for x in str(f).splitlines()[1:]]
            head, decls = lines[0], [x for x in lines[1:] if not x.startswith("USE")]
            out += [f"  SUBROUTINE {head}", "    IMPORT"] + ["    " + d for d in decls] \
                + [f"  END SUBROUTINE {head.split('(')[0]}"]
    out.append("END INTERFACE")
    return out


def gen_module(header_text, forms):
    out = [f"! Tern: module mpi_f08, {NOTE}",
           "! (tools/bindgen/fortran_f08.py). Handles are TYPEs holding the `mpi`",
           "! module's INTEGER (MPI_VAL); buffers arrive in C as CFI descriptors.",
           "! MPI_F08_TYPES holds what the procedures (mpi_f08_procs*.f90, external",
           "! so that a profiling library can replace them) need; MPI_F08 adds the",
           "! interfaces, MPI_ and PMPI_.",
           "MODULE MPI_F08_TYPES",
           "  USE, INTRINSIC :: ISO_C_BINDING, ONLY: C_INT, C_INT64_T, C_DOUBLE, C_CHAR, C_SIZE_T, &",
           "    C_PTR, C_FUNPTR, C_FUNLOC",
           "  IMPLICIT NONE",
           "  PRIVATE :: C_INT, C_INT64_T, C_DOUBLE, C_CHAR, C_SIZE_T, C_FUNPTR, C_FUNLOC"]
    for h in HANDLES:
        out += [f"  TYPE, BIND(C) :: MPI_{h}", "    INTEGER(C_INT) :: MPI_VAL",
                f"  END TYPE MPI_{h}"]
    out += ["  ! MPI_Status's layout: two hidden words (the count, cancelled), then",
            "  ! the public fields.",
            "  TYPE, BIND(C) :: MPI_Status",
            "    INTEGER(C_INT) :: tern_count_lo, tern_count_hi_and_cancelled",
            "    INTEGER(C_INT) :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
            "  END TYPE MPI_Status"]
    kinded = []
    for n, t, v in _constants(header_text):
        if t:
            out.append(f"  TYPE(MPI_{t}), PARAMETER :: {n} = MPI_{t}({v})")
        elif n in fortran.KINDED:
            kinded.append(f"  INTEGER(KIND={fortran.KINDED[n]}), PARAMETER :: {n} = {v}")
        else:
            out.append(f"  INTEGER, PARAMETER :: {n} = {v}")
    for n, v in fortran.FORTRAN_ONLY:
        if n in ("MPI_SOURCE", "MPI_TAG", "MPI_ERROR"):
            continue  # TYPE(MPI_Status)'s components here
        out.append(f"  INTEGER, PARAMETER :: {n} = {v}")
    out += kinded
    out += ["  ! Choice buffers of any section are taken: contiguous ones by address,",
            "  ! others as a datatype over the user's or, in blocking calls, through",
            "  ! a copy (docs/design.md).",
            "  LOGICAL, PARAMETER :: MPI_SUBARRAYS_SUPPORTED = .TRUE.",
            "  LOGICAL, PARAMETER :: MPI_ASYNC_PROTECTS_NONBLOCKING = .TRUE."]
    # The sentinels: the `mpi` module's common blocks, so one address each.
    for name, block, decl in fortran.SENTINELS:
        if name == "MPI_STATUS_IGNORE":
            decl = "TYPE(MPI_Status) MPI_STATUS_IGNORE"
        elif name == "MPI_STATUSES_IGNORE":
            decl = "TYPE(MPI_Status) MPI_STATUSES_IGNORE(1)"
        out += [f"  {decl}", f"  COMMON /{block}/ {name}", f"  SAVE /{block}/"]
    out += ["  " + x for x in _abstract_interfaces()]
    for n, iface in F08_CALLBACKS.items():
        out.append(f"  PROCEDURE({iface}) :: {n}")
    for op in ("==", "/="):
        tag = "EQ" if op == "==" else "NE"
        out.append(f"  INTERFACE OPERATOR({op})")
        out += [f"    MODULE PROCEDURE TERN_{tag}_{h.upper()}" for h in HANDLES]
        out.append("  END INTERFACE")
    out += [f"  PRIVATE :: TERN_{t}_{h.upper()}" for t in ("EQ", "NE") for h in HANDLES]
    sizeof = fortran._sizeof_lines()
    cut = sizeof.index("CONTAINS")
    out += sizeof[:cut]
    out.append("CONTAINS")
    for h in HANDLES:
        for tag, op in (("EQ", "=="), ("NE", "/=")):
            out += [f"  ELEMENTAL LOGICAL FUNCTION TERN_{tag}_{h.upper()}(a, b)",
                    f"    TYPE(MPI_{h}), INTENT(IN) :: a, b",
                    f"    TERN_{tag}_{h.upper()} = a%MPI_VAL {op} b%MPI_VAL",
                    f"  END FUNCTION TERN_{tag}_{h.upper()}"]
    out += sizeof[cut + 1:]
    out.append("END MODULE MPI_F08_TYPES")
    out += ["", "MODULE MPI_F08", "  USE MPI_F08_TYPES", "  IMPLICIT NONE"]
    generics = {}
    for f in forms:
        generics.setdefault(f.fname, []).append(f)
    for prefix in ("", "P"):
        for g, fs in generics.items():
            out.append(f"  INTERFACE {prefix}{g}")
            for f in fs:
                for line in f.interface(prefix):
                    out += fortran._wrap_free("    " + line)
            out.append(f"  END INTERFACE {prefix}{g}")
    out.append("END MODULE MPI_F08")
    return "\n".join(out) + "\n"


def _by_section(forms):
    """[(file key, [forms])]: the forms cut by chapter section
    (chapters.SECTIONS), as the C entry points are."""
    by_name = {}
    for f in forms:
        by_name.setdefault(f.cname, []).append(f)
    return [(key, [f for n in names for f in by_name[n]])
            for key, names in file_groups(list(by_name), fortran.chapter_or_ext)]


# Most lines of a procedure file: a section with more is cut into parts
# of about equal length, <section>_1, <section>_2..., whole procedures
# each (a form's MPI_ and PMPI_ together, in the section's order).
PROCS_FILE_LINES = 900


def _cut(units, room):
    """units (lists of lines) as consecutive parts of at most room lines
    each (a unit longer than room alone in its part), the fewest such parts
    of about equal length."""
    total = sum(len(u) for u in units)
    n = max(1, -(-total // room))
    while True:
        parts, done = [[] for _ in range(n)], 0
        for u in units:
            # The part where the unit's middle line falls.
            parts[min(n - 1, (done + len(u) // 2) * n // total)].append(u)
            done += len(u)
        parts = [p for p in parts if p]
        if all(sum(len(u) for u in p) <= room or len(p) == 1 for p in parts):
            return parts
        n += 1


def gen_procs(forms):
    """{file name: text} of the specific procedures, MPI_ and PMPI_."""
    head = [f"! Tern: the mpi_f08 module's procedures, {NOTE}",
            "! (tools/bindgen/fortran_f08.py): external procedures, one per",
            "! specific name of the standard (MPI_Send_f08ts, PMPI_Send_f08ts)."]
    out = {}
    for key, group in _by_section(forms):
        units = [[w for prefix in ("", "P") for line in f.fortran(prefix)
                  for w in fortran._wrap_free(line)] for f in group]
        parts = _cut(units, PROCS_FILE_LINES - len(head))
        for i, part in enumerate(parts, 1):
            name = key if len(parts) == 1 else f"{key}_{i}"
            out[f"mpi_f08_procs_{name}.f90"] = "\n".join(head + [w for u in part for w in u]) + "\n"
    return out


def gen_c(forms):
    head = ["/* The mpi_f08 module's C functions (the forms with choice buffers,",
            f" * TYPE(C_PTR) or large counts), {NOTE}",
            " * (tools/bindgen/fortran_f08.py; the helpers: src/fortran/f08_support.h). */",
            '#include "fortran/f08_support.h"']
    out = {}
    for key, group in _by_section([f for f in forms if f.own_c]):
        body = [f.c(prefix) for f in group for prefix in ("", "P")]
        out[f"f08_wrappers_{key}.c"] = "\n".join(head + [line for t in body for line in ("", t)]) + "\n"
    return out


# ---------------------------------------------------------------------------
# MPICH 4.0's names (libmpichfort.so.12, docs/design.md "The MPICH ABI face").

# MPICH's module mpi_f08_types: its handle types (with == and /= and, but
# for MPI_File, f2c/c2f) and its MPI_SIZEOF specifics, by kind.
MPICH_HANDLES = ["Comm", "Datatype", "Errhandler", "File", "Group", "Info", "Op", "Request",
                 "Win", "Message", "Session"]
MPICH_SIZEOFS = ["character", "logical", "xint8", "xint16", "xint32", "xint64", "xreal32",
                 "xreal64", "xreal128", "xcomplex32", "xcomplex64", "xcomplex128"]
# MPICH 4.0 still calls MPI-4.1's MPI_Remove_error_* MPIX_Delete_error_*,
# and its f08 procedures MPI_Delete_error_*.
MPICH_RENAMED = {"MPI_Remove_error_class": "MPI_Delete_error_class",
                 "MPI_Remove_error_code": "MPI_Delete_error_code",
                 "MPI_Remove_error_string": "MPI_Delete_error_string"}
# MPICH's Fortran MPI_FILE_NULL is its C one, 0 (a pointer there).
MPICH_VALUES = {"MPI_FILE_NULL": 0}
# module mpi_f08_link_constants: sentinels a program binds by copy
# relocation (fortran_support.h compares their addresses).
MPICH_LINK_CONSTANTS = [("argv_null", "char"), ("argvs_null", "char"),
                        ("errcodes_ignore", "MPI_Fint"), ("unweighted", "MPI_Fint"),
                        ("weights_empty", "MPI_Fint")]


def _sizeof_bytes(kind):
    m = re.match(r"x(int|real|complex)(\d+)$", kind)
    if not m:
        return {"character": 1, "logical": 4}[kind]
    return int(m.group(2)) // 8 * (2 if m.group(1) == "complex" else 1)


def _mpich_name(f, prefix):
    """MPICH 4.0's external name of a form: mpi_send_f08ts_large_ for
    MPI_Send_c_f08ts, pmpir_send_f08ts_ for PMPI_Send_f08ts."""
    base = f.cname[:-2] if f.big else f.cname
    base = MPICH_RENAMED.get(base, base)
    tail = f.specific[len(f.cname):] + ("_large" if f.big else "")
    return ("pmpir_" if prefix else "mpi_") + (base[4:] + tail).lower() + "_"


def gen_mpich_aliases(forms):
    """A linker script (an input of libmpichfort's link) naming Tern's f08
    procedures by MPICH's names, and its predefined callbacks by module
    mpi_f08_callbacks' procedures."""
    out = ["/* libmpichfort.so.12: MPICH 4.0's names of Tern's mpi_f08 procedures,",
           f" * {NOTE}",
           " * (tools/bindgen/fortran_f08.py). Large-count forms are MPICH's",
           " * _f08ts_large_ (Tern's _c_f08ts_), PMPI_ ones pmpir_ (Tern's pmpi_),",
           " * the predefined callbacks module procedures of mpi_f08_callbacks. */"]
    for f in forms:
        for prefix in ("", "P"):
            tern = (prefix + f.specific).lower() + "_"
            mpich = _mpich_name(f, prefix)
            if mpich != tern:
                out.append(f"{mpich} = {tern};")
    for n in F08_CALLBACKS:
        out.append(f"__mpi_f08_callbacks_MOD_{n.lower()} = {n.lower()}_;")
    return "\n".join(out) + "\n"


def gen_mpich_modules(header_text):
    """C definitions of what a program built with MPICH's mpi_f08 calls or
    binds by its modules' names (gfortran's __<module>_MOD_<name>)."""
    out = ["/* libmpichfort.so.12: the procedures and data of MPICH 4.0's modules",
           " * mpi_f08_types, mpi_f08_callbacks, mpi_f08_link_constants and",
           f" * mpi_f08_compile_constants, {NOTE}",
           " * (tools/bindgen/fortran_f08.py). gfortran passes every argument by",
           " * reference but VALUE ones, an absent OPTIONAL as NULL, an assumed-rank",
           " * one as its descriptor; a LOGICAL result is a C int (.TRUE. 1). */",
           '#include "fortran/fortran_support.h"',
           "",
           "#include <string.h>",
           "",
           "#define MOD(module, name) __asm__(\"__\" #module \"_MOD_\" #name)",
           "",
           "/* == and /= of two handles, or of a handle and its INTEGER, either side. */"]

    def fn(ret, name, params, body, module="mpi_f08_types"):
        c = f"tern_mpich_{name}"
        out.extend([f"{ret} {c}({params}) MOD({module}, {name});",
                    f"{ret} {c}({params})", "{", f"    {body}", "}"])

    for h in MPICH_HANDLES:
        x = h.lower()
        for op, sym in (("eq", "=="), ("neq", "!=")):
            for name in (f"mpi_{x}_{op}", f"mpi_{x}_f08_{op}_f", f"mpi_{x}_f_{op}_f08"):
                fn("int", name, "const MPI_Fint *a, const MPI_Fint *b", f"return *a {sym} *b;")
    out.append("")
    out.append("/* MPI_<handle>_f2c and _c2f (MPI_File's are C functions): casts. */")
    for h in MPICH_HANDLES:
        if h != "File":
            for d in ("f2c", "c2f"):
                fn("MPI_Fint", f"mpi_{h.lower()}_{d}", "MPI_Fint x", "return x;")
    out.append("")
    out.append("/* MPI_SIZEOF: the size of one element of the kind (any rank). */")
    for k in MPICH_SIZEOFS:
        fn("void", f"mpi_sizeof_{k}", "const void *x, MPI_Fint *size, MPI_Fint *ierror",
           f"(void)x; *size = {_sizeof_bytes(k)}; if (ierror) *ierror = MPI_SUCCESS;")
    out.append("")
    out.append("/* TYPE(MPI_Status), INTEGER(MPI_STATUS_SIZE) and MPICH's C status: one")
    out.append(" * layout (docs/design.md, \"Fortran bindings\"), so a copy. */")
    size = "MPI_F_STATUS_SIZE * sizeof(MPI_Fint)"
    for name, src_dst in (("mpi_status_f082f", "in, MPI_Fint *out, MPI_Fint *ierror"),
                          ("mpi_status_f2f08", "in, MPI_Fint *out, MPI_Fint *ierror")):
        fn("void", name, "const MPI_Fint *" + src_dst,
           f"memcpy(out, in, {size}); if (ierror) *ierror = MPI_SUCCESS;")
    for name in ("mpi_status_f08_assign_c", "mpi_status_c_assign_f08"):
        fn("void", name, "MPI_Fint *out, const MPI_Fint *in", f"memcpy(out, in, {size});")
    out.append("")
    out.append("/* MPI_CONVERSION_FN_NULL(_C): marks \"no conversion\"; the f08 wrappers")
    out.append(" * of MPI_Register_datarep pass it to C as NULL (TERN_F08_CONV). */")
    for suffix in ("", "_c"):
        fn("void", f"mpi_conversion_fn_null{suffix}", "void", "return;", "mpi_f08_callbacks")
    out.append("")
    out.append("/* The sentinels of module mpi_f08_link_constants. */")
    for name, t in MPICH_LINK_CONSTANTS:
        out.append(f"{t} tern_mpich_f08_{name}[1] MOD(mpi_f08_link_constants, mpi_{name});")
    out.append("")
    out.append("/* The handles of module mpi_f08_compile_constants (named constants a")
    out.append(" * program may pass by reference). */")
    for n, t, v in _constants(header_text):
        if t:
            v = MPICH_VALUES.get(n, v)
            out.append(f"const MPI_Fint tern_mpich_{n.lower()} "
                       f"MOD(mpi_f08_compile_constants, {n.lower()}) = {v};")
    return "\n".join(out) + "\n"


def outputs(root, specs, header_text):
    forms, left = _forms(specs)
    out = {f"src/fortran/gen/{n}": t for n, t in gen_c(forms).items()}
    out["src/fortran/gen/mpich/f08_modules.c"] = gen_mpich_modules(header_text)
    out["src/fortran/gen/mpich/f08_aliases.ld"] = gen_mpich_aliases(forms)
    out["src/fortran/gen/mpi_f08_module.f90"] = gen_module(header_text, forms)
    out.update({f"src/fortran/gen/{n}": t for n, t in gen_procs(forms).items()})
    return out, left
