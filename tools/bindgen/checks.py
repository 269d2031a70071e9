"""Argument checks derived from parameter kinds, and the entry points that use them.

Every parameter of a generated entry point is checked by a rule chosen from
its kind and direction in the MPI Forum's data; a kind with no rule stops the
generator (a spec can say `unchecked = ["name"]` where the core checks it,
or name another rule in `check = {name = "rule"}`). The checks run in
parameter order and stop at the first bad argument, whose error (class and a
message naming the function and the argument) goes through the error
handler of the object the call is about (the first communicator argument,
else the first session, window or file argument, else MPI_COMM_WORLD's
while the world model runs; `err_handle` names another: error_object). The core call is the spec's `core`
expression over the parameter names and, for every checked input handle X,
its object X_obj. Spec keys besides core (a chapter's [defaults] table
applies to each of its procedures):
  init = false      callable before MPI_Init and after MPI_Finalize (it
                    still holds the entry points' lock under
                    MPI_THREAD_MULTIPLE, TERN_API_GUARD, unless lock = false)
  lock = false      with init = false: touches no shared state (MPI_Wtick,
                    the status conversions), so it takes no lock
  writable = [X]    info X must not be MPI_INFO_ENV; keyval X not predefined
  info_null = true  info arguments may be MPI_INFO_NULL (hints)
  check = {X = R}   named rule R for X (NAMED below)
  unchecked = [X]   X goes to the core as it is
  null_ok = [X]     handle X may also be its kind's null handle (the core
                    gets X_obj == NULL): MPI-4.1's names of the null handles
  check_call = C    an expression returning an MPI code that checks every
                    parameter but communicators, info, requests and those in
                    also_check (the semantic checks of collectives: roots,
                    MPI_IN_PLACE...; point-to-point's one-pass check)
  also_check = [X]  X keeps its kind's rule beside check_call
  locals = [D]      declarations (without ;) for check_call and core to share
                    (point-to-point: the communicator and datatype decoded once)
  err_handle = E    the handle (a C expression) whose error handler gets the
                    call's errors: a session's, or an error handler itself
                    for constructors that name the new object's handler
  returns = "mpi"   the core call returns an MPI error code itself (the
                    completion procedures: their statuses carry MPI codes,
                    MPI_ERR_IN_STATUS; src/mpi/mpi_request.c)
  large_count = true  the same spec generates the procedure's _c form too
                    (bindgen.py): its core expression must serve both, the
                    scalars widening to MPI_Count, arrays and outputs
                    through TERN_NUMS / TERN_NUM_REF (dtype_nums.h)
  checked = false   no argument checks and no error handler: the core
                    checks every argument and returns the code itself (the
                    tools interface, whose MPI_T_ERR_* codes never go
                    through a handler; MPI-5.0 15.3.10)
  returns = "value" an int result that is not an error code (MPI_Comm_toint):
                    no checks, the core's value
The output request X of a core call that uses X_req (tern_req_t *) is
handed to the caller as a handle once the call succeeds."""

import re

# The null handle of each kind a spec may accept (null_ok).
NULL_HANDLE = {"COMMUNICATOR": "MPI_COMM_NULL", "DATATYPE": "MPI_DATATYPE_NULL",
               "WINDOW": "MPI_WIN_NULL", "FILE": "MPI_FILE_NULL"}

# Input handles: kind -> (object type or None, check call format).
HANDLE_IN = {
    "COMMUNICATOR": ("tern_comm_t", "tern_check_comm(func, {x}, &{x}_obj)"),
    "SESSION": ("tern_session_t", "tern_check_session(func, err_obj, {x}, &{x}_obj)"),
    "GROUP": ("tern_group_t", "tern_check_group(func, err_obj, {x}, &{x}_obj)"),
    "INFO": ("tern_info_t",
             "tern_check_info(func, err_obj, {x}, {info_flags}, &{x}_obj)"),
    "ERRHANDLER": (None, "tern_check_errhandler(func, err_obj, {x})"),
    "KEYVAL": (None, "tern_check_keyval(func, err_obj, {x}, {writable})"),
    "OPERATION": (None, "tern_check_op(func, err_obj, {x})"),
    # Any type, committed or not (constructors, queries); data moves only
    # with committed ones: rule committed_type.
    "DATATYPE": (None, 'tern_check_type(func, err_obj, {x}, "{x}")'),
    # Windows and files: errors go to the object's own handler (err_obj is
    # its handle; see error_object).
    "WINDOW": ("tern_win_t", "tern_check_win(func, err_obj, {x}, &{x}_obj)"),
    "FILE": ("tern_file_t", "tern_check_file(func, err_obj, {x}, &{x}_obj)"),
}

# Scalars checked against a fixed range: kind -> check call format.
SCALAR_IN = {
    "TAG": "tern_check_send_tag(func, err_obj, {x})",
    "POLYDTYPE_NUM_ELEM_NNI": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_COUNT)',
    "POLYNUM_BYTES_NNI": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_COUNT)',
    "ORDER": "tern_check_order(func, err_obj, {x})",
    # Array and value lengths: MPI_ERR_ARG.
    "ARRAY_LENGTH": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_ARG)',
    "ARRAY_LENGTH_NNI": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_ARG)',
    "INFO_VALUE_LENGTH": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_ARG)',
    # One-sided: counts, target displacements, window and attach sizes.
    "POLYXFER_NUM_ELEM_NNI": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_COUNT)',
    # I/O: element counts of a data access.
    "POLYXFER_NUM_ELEM": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_COUNT)',
    "RMA_DISPLACEMENT_NNI": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_DISP)',
    "WINDOW_SIZE": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_SIZE)',
    "WIN_ATTACH_SIZE": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_SIZE)',
    # MPI_Alloc_mem's size: MPI_ERR_ARG, as MPICH.
    "ALLOC_MEM_NUM_BYTES": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_ARG)',
}

# Kinds whose value needs no check here (any int is meaningful, or the
# core decides against an object the check cannot see).
UNCHECKED_IN = {"COLOR", "KEY", "LOGICAL", "KEY_INDEX", "GROUP_COMPARISON", "ERROR_CODE",
                "ERROR_CLASS",
                "THREAD_LEVEL", "EXTRA_STATE", "EXTRA_STATE2", "ATTRIBUTE_VAL", "ATTRIBUTE_VAL_10",
                "SPLIT_TYPE",
                # One-sided: target ranks (MPI_PROC_NULL allowed), asserts,
                # lock types and displacement units: the core checks them
                # against the window.
                "RANK_NNI", "ASSERT", "LOCK_TYPE", "POLYRMA_DISPLACEMENT",
                # I/O: offsets, access modes and whence are checked by the
                # core against the file (its messages name the file).
                "OFFSET", "ACCESS_MODE", "UPDATE_MODE",
                # Buffers may be NULL (count 0, MPI_BOTTOM); strides, bounds and
                # displacements may be negative; sizes and array capacities are
                # compared with what the core needs.
                "BUFFER", "POLYDTYPE_STRIDE_BYTES", "POLYDISPLACEMENT_AINT_COUNT",
                "POLYDTYPE_PACK_SIZE", "POLYNUM_PARAM_VALUES",
                # MPI_Pcontrol's "...": whatever a profiler wants.
                "VARARGS"}

# Lengths that must be positive: kind -> (C condition that is bad, message format).
LENGTH_IN = {
    "ARRAY_LENGTH_PI": ("{x} <= 0", '"{x}=%d is not positive", {x}'),
}

# Named rules a spec can pick with check = {param = "rule"}.
NAMED = {
    "info_key": "tern_check_info_key(func, err_obj, {x})",
    "info_value": "tern_check_info_value(func, err_obj, {x})",
    "ptr": "tern_check_ptr(func, err_obj, {x}, \"{x}\")",
    "recv_tag": "tern_check_recv_tag(func, err_obj, {x})",
    # Datatypes: a type data moves with; counts of kinds that allow negative
    # values elsewhere (POLYDTYPE_NUM_ELEM is also a vector's stride); block
    # lengths (MPI_ERR_ARG, as MPICH); dimensions; a status to read or write.
    "committed_type": 'tern_check_committed_type(func, err_obj, {x}, "{x}")',
    "count": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_COUNT)',
    "blocklength": 'tern_check_nonneg(func, err_obj, {x}, "{x}", MPI_ERR_ARG)',
    "ndims": ('({x} <= 0 ? tern_mpi_error(err_obj, MPI_ERR_DIMS, func, "{x}=%d is not positive", '
              '{x}) : MPI_SUCCESS)'),
    "status": "tern_check_status(func, err_obj, {x})",
}


def c_param(p):
    """One C parameter as Tern writes it: `void *buf`, and a one-dimensional
    array as a pointer (`MPI_Status *array_of_statuses`, the same type):
    GCC checks accesses through array parameters and warns when a program
    passes a sentinel such as MPI_STATUSES_IGNORE."""
    text = re.sub(r"(\w)(\*+) ", r"\1 \2", str(p)).replace("\\ldots", "...")
    # The data renders an argument list (MPI_Info_create_env's argv) as
    # `char argv[]`; the standard's binding is `char *argv[]` (`char **argv`).
    if p._parseset["kind"] == "ARGUMENT_LIST" and text.startswith("char ") and text.endswith("[]"):
        return "char **" + text[len("char "):-2]
    return re.sub(r"^(.*?)\s*(\w+)\[\]$", r"\1 *\2", text)


def _param(p):
    ps = p._parseset
    return {
        "name": ps["name"], "kind": ps["kind"], "dir": ps["param_direction"],
        "length": ps["length"], "decl": c_param(p),
    }


def _rule(proc, prm, spec):
    """(check expression or None, object declaration or None) for one parameter."""
    x, kind, direction = prm["name"], prm["kind"], prm["dir"]
    named = spec.get("check", {}).get(x)
    if named:
        if named not in NAMED:
            raise SystemExit(f"bindgen: {proc}: unknown check rule '{named}' for {x}")
        return NAMED[named].format(x=x), None
    if x in spec.get("unchecked", []):
        return None, None
    length = prm["length"]
    is_array = length is not None
    if spec.get("check_call") and kind not in ("COMMUNICATOR", "INFO", "REQUEST") and \
            x not in spec.get("also_check", []):
        return None, None  # the spec's check_call covers it
    if direction == "out" and x == spec.get("request"):
        return f'tern_check_ptr(func, err_obj, {x}, "{x}")', f"tern_req_t *{x}_req = NULL;"
    if direction in ("in", "inout") and kind in HANDLE_IN and not is_array:
        obj, fmt = HANDLE_IN[kind]
        writable = int(x in spec.get("writable", []))
        flags = [f for f, on in (("TERN_INFO_WRITABLE", writable),
                                 ("TERN_INFO_NULL_OK", spec.get("info_null"))) if on]
        args = {"writable": writable, "info_flags": " | ".join(flags) or "0"}
        decl = f"{obj} *{x}_obj = NULL;" if obj else None
        if direction == "in" and x in spec.get("null_ok", []):
            return f"({x} == {NULL_HANDLE[kind]} ? MPI_SUCCESS : {fmt.format(x=x, **args)})", decl
        if direction == "in":
            return fmt.format(x=x, **args), decl
        # A handle to free or replace: the pointer, then the handle it holds.
        check = (f'tern_check_ptr(func, err_obj, {x}, "{x}")) ||\n        (err = '
                 + fmt.format(x="*" + x, **args)
                 .replace(f"&*{x}_obj", f"&{x}_obj"))
        return check, decl
    if direction == "in" and kind in SCALAR_IN and not is_array:
        return SCALAR_IN[kind].format(x=x), None
    if direction == "in" and kind in LENGTH_IN and not is_array:
        bad, msg = LENGTH_IN[kind]
        return (f"({bad.format(x=x)} ? tern_mpi_error(err_obj, MPI_ERR_ARG, func, "
                f"{msg.format(x=x)}) : MPI_SUCCESS)"), None
    if direction == "in" and kind in UNCHECKED_IN and not is_array:
        return None, None
    if is_array and isinstance(length, list):
        length = length[0]
    if is_array and length is not None:
        # An array (in or out): needed when its length is positive.
        return (f'tern_check_array(func, err_obj, {x}, {length}, "{x}")'), None
    if direction in ("out", "inout") or kind in ("STRING", "FUNCTION"):
        return f'tern_check_ptr(func, err_obj, {x}, "{x}")', None
    raise SystemExit(f"bindgen: {proc}: no check rule for parameter {x} of kind {kind} "
                     f"({direction}); add one to tools/bindgen/checks.py or list it in "
                     "unchecked=")


# The kinds of object whose error handler a call's errors go to, in the order
# a call's parameters are searched for one.
ERROR_OBJECTS = ("COMMUNICATOR", "SESSION", "WINDOW", "FILE")


def error_object(params):
    """The C expression of the handle whose error handler gets a call's
    errors: its first input communicator, else session, window or file
    (for windows and files an in/out one too, MPI_Win_free's, read through
    its pointer); None when it has none (MPI_COMM_WORLD's handler while the
    world model runs)."""
    for kind in ERROR_OBJECTS:
        for p in params:
            if p["kind"] != kind or p["length"] is not None:
                continue
            if p["dir"] == "in":
                return p["name"]
            if p["dir"] == "inout" and kind in ("WINDOW", "FILE"):
                null = NULL_HANDLE.get(kind, "MPI_COMM_NULL")
                return f'({p["name"]} ? *{p["name"]} : {null})'
    return None


# Entry points the MPICH ABI face replaces (MPICH's MPI_File is a pointer:
# src/mpich/mpich_abi.c): defined as tern_face_PMPI_<name>
# (TERN_FACE_NAME), their MPI_ and PMPI_ names weak aliases of it
# (TERN_FACE_ALIAS), so that libmpich.so.12 gives both names over Tern's
# entry point; libmpi_abi's copy of the layer names them PMPI_<name> like
# the others (src/mpi/mpi_errors.h).
ABI_FACE_REPLACED = {"MPI_File_open", "MPI_File_close", "MPI_File_f2c", "MPI_File_c2f",
                     "MPI_File_set_errhandler", "MPI_File_get_errhandler",
                     "MPI_File_call_errhandler", "MPI_Get_version"}


def _head(ret, name, args):
    """The alias line and the signature of an entry point."""
    if name in ABI_FACE_REPLACED:
        return [f"TERN_FACE_ALIAS({name[4:]})", f"{ret} TERN_FACE_NAME({name[4:]})({args})"]
    return [_alias(name), f"{ret} {_pname(name)}({args})"]


def stem(name):
    """'Send' of MPI_Send, 'Comm_revoke' of MPIX_Comm_revoke."""
    return name.split("_", 1)[1]


def _alias(name):
    """The weak MPI_ (MPIX_) alias of the PMPI_ (PMPIX_) definition."""
    return (f"TERN_PMPIX_ALIAS({stem(name)})" if name.startswith("MPIX_")
            else f"TERN_PMPI_ALIAS({stem(name)})")


def _pname(name):
    return "P" + name


def entry_point(expr, spec):
    """The C text of one generated entry point."""
    name = expr.name
    params = [_param(p) for p in expr.parameters]
    # An output request whose X_req the core call sets is handed out.
    for p in params:
        if p["kind"] == "REQUEST" and p["dir"] == "out" and \
                re.search(r"\b%s_req\b" % p["name"], spec.get("core", "")):
            spec = {**spec, "request": p["name"]}
    ret = expr.return_type
    args = ", ".join(p["decl"] for p in params) or "void"
    if ret != "int" or spec.get("returns") == "value":
        # Not an error code (MPI_Wtime, MPI_Aint_add, MPI_Comm_toint): no
        # checks, the core's value.
        if spec.keys() - {"core", "init", "returns"}:
            raise SystemExit(f"bindgen: {name} returns {ret}: its arguments are not checked")
        return "\n".join(_head(ret, name, args) + ["{", f"    return {spec['core']};", "}"])
    obj = error_object(params)
    obj = spec.get("err_handle", obj)
    decls, checks = [], []
    for prm in (params if spec.get("checked", True) else []):
        check, decl = _rule(name, prm, spec)
        if decl:
            decls.append(decl)
        if check:
            checks.append(check)
    out = _head("int", name, args) + ["{"]
    if spec.get("checked", True):
        out.append(f'    static const char func[] = "{name}";')
    if spec.get("init", True):
        out.append("    TERN_CHECK_INIT(func);")
    elif spec.get("lock", True):
        out.append("    TERN_API_GUARD();")
    if spec.get("check_call"):
        checks.append(spec["check_call"])
    # The object whose error handler gets the call's errors, when a check
    # or the result uses it.
    if spec.get("returns") != "mpi" or any("err_obj" in c for c in checks):
        out.append(f"    const int err_obj = {obj or 'MPI_COMM_NULL'};")
    used = " ".join(checks) + " " + spec["core"]
    unused = [p["name"] for p in params
              if p["kind"] != "VARARGS" and not re.search(r"\b%s\b" % p["name"], used)]
    if unused:
        out.append("    " + ", ".join(f"(void){x}" for x in unused) + "; /* not the core's */")
    out += ["    " + d for d in decls]
    out += ["    " + d + ";" for d in spec.get("locals", [])]
    if checks:
        # The result's local; MPI_Status_get_error has a parameter named err.
        ev = "err_" if any(p["name"] == "err" for p in params) else "err"
        out.append(f"    int {ev};")
        joined = " ||\n        ".join(f"({ev} = {c})" for c in checks)
        out.append(f"    if ({joined})")
        out.append(f"        return {ev};")
    req = spec.get("request")
    if req:
        # The core hands back a request object; the caller gets its handle.
        out.append(f"    err = tern_mpi_result(err_obj, func, {spec['core']});")
        out.append("    if (err == MPI_SUCCESS)")
        out.append(f"        err = tern_mpi_request_handle(func, err_obj, {req}_req, {req});")
        out.append("    return err;")
    elif spec.get("returns") == "mpi":
        out.append(f"    return {spec['core']};")
    else:
        out.append(f"    return tern_mpi_result(err_obj, func, {spec['core']});")
    out.append("}")
    return "\n".join(out)
