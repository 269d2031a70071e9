"""Argument checks derived from parameter kinds, and the entry points that use them.

Every parameter of a generated entry point is checked by a rule chosen from
its kind and direction in the MPI Forum's data; a kind with no rule stops the
generator (a spec can say `unchecked = ["name"]` where the core checks it,
or name another rule in `check = {name = "rule"}`). The checks run in
parameter order and stop at the first bad argument, whose error (class and a
message naming the function and the argument) goes through the error
handler of the communicator the call is about (the first communicator
argument, else MPI_COMM_WORLD's). The core call is the spec's `core`
expression over the parameter names and, for every checked input handle X,
its object X_obj."""

import re

# Input handles: kind -> (object type, check call format).
HANDLE_IN = {
    "COMMUNICATOR": ("tern_comm_t", "tern_check_comm(func, {x}, &{x}_obj)"),
    "GROUP": ("tern_group_t", "tern_check_group(func, err_comm, {x}, &{x}_obj)"),
    "INFO": ("tern_info_t", "tern_check_info(func, err_comm, {x}, {writable}, &{x}_obj)"),
}

# Kinds whose value needs no check here (any int is meaningful, or the
# core decides against an object the check cannot see).
UNCHECKED_IN = {"COLOR", "KEY", "LOGICAL", "KEY_INDEX", "GROUP_COMPARISON"}

# Lengths: kind -> (C condition that is bad, message format).
LENGTH_IN = {
    "ARRAY_LENGTH": ("{x} < 0", '"{x}=%d is negative", {x}'),
    "ARRAY_LENGTH_NNI": ("{x} < 0", '"{x}=%d is negative", {x}'),
    "INFO_VALUE_LENGTH": ("{x} < 0", '"{x}=%d is negative", {x}'),
    "ARRAY_LENGTH_PI": ("{x} <= 0", '"{x}=%d is not positive", {x}'),
}

# Named rules a spec can pick with check = {param = "rule"}.
NAMED = {
    "info_key": "tern_check_info_key(func, err_comm, {x})",
    "info_value": "tern_check_info_value(func, err_comm, {x})",
    "ptr": "tern_check_ptr(func, err_comm, {x}, \"{x}\")",
}


def c_param(p):
    """One C parameter as Tern writes it: `void *buf`, and a one-dimensional
    array as a pointer (`MPI_Status *array_of_statuses`, the same type):
    GCC checks accesses through array parameters and warns when a program
    passes a sentinel such as MPI_STATUSES_IGNORE."""
    text = re.sub(r"(\w)\* ", r"\1 *", str(p))
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
    if direction == "in" and kind in HANDLE_IN and not is_array:
        obj, fmt = HANDLE_IN[kind]
        writable = int(x in spec.get("writable", []))
        return fmt.format(x=x, writable=writable), f"{obj} *{x}_obj = NULL;"
    if direction == "inout" and kind in HANDLE_IN and not is_array:
        # A handle to free or replace: the pointer, then the handle it holds.
        obj, fmt = HANDLE_IN[kind]
        writable = int(x in spec.get("writable", []))
        check = (f'tern_check_ptr(func, err_comm, {x}, "{x}")) ||\n        (err = '
                 + fmt.format(x="*" + x, writable=writable).replace(f"&*{x}_obj", f"&{x}_obj"))
        return check, f"{obj} *{x}_obj = NULL;"
    if direction == "in" and kind in LENGTH_IN and not is_array:
        bad, msg = LENGTH_IN[kind]
        return (f"({bad.format(x=x)} ? tern_mpi_error(err_comm, MPI_ERR_ARG, func, "
                f"{msg.format(x=x)}) : MPI_SUCCESS)"), None
    if direction == "in" and kind in UNCHECKED_IN and not is_array:
        return None, None
    if is_array and isinstance(length, list):
        length = length[0]
    if is_array and length is not None:
        # An array (in or out): needed when its length is positive.
        return (f'tern_check_array(func, err_comm, {x}, {length}, "{x}")'), None
    if direction in ("out", "inout") or kind == "STRING":
        return f'tern_check_ptr(func, err_comm, {x}, "{x}")', None
    raise SystemExit(f"bindgen: {proc}: no check rule for parameter {x} of kind {kind} "
                     f"({direction}); add one to tools/bindgen/checks.py or list it in "
                     "unchecked=")


def entry_point(expr, spec):
    """The C text of one generated entry point."""
    name = expr.name
    params = [_param(p) for p in expr.parameters]
    ret = expr.return_type
    if ret != "int":
        raise SystemExit(f"bindgen: {name} returns {ret}; only int procedures are generated")
    comm = next((p["name"] for p in params
                 if p["kind"] == "COMMUNICATOR" and p["dir"] == "in" and p["length"] is None),
                None)
    decls, checks = [], []
    for prm in params:
        check, decl = _rule(name, prm, spec)
        if decl:
            decls.append(decl)
        if check:
            checks.append(check)
    args = ", ".join(p["decl"] for p in params) or "void"
    out = [f"TERN_PMPI_ALIAS({name[4:]})",
           f"int PMPI_{name[4:]}({args})",
           "{",
           f'    static const char func[] = "{name}";',
           "    TERN_CHECK_INIT(func);",
           f"    const MPI_Comm err_comm = {comm or 'MPI_COMM_NULL'};"]
    out += ["    " + d for d in decls]
    if checks:
        out.append("    int err;")
        joined = " ||\n        ".join(f"(err = {c})" for c in checks)
        out.append(f"    if ({joined})")
        out.append("        return err;")
    out.append(f"    return tern_mpi_result(err_comm, func, {spec['core']});")
    out.append("}")
    return "\n".join(out)
