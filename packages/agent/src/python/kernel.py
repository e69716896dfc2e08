# The Python kernel of sandboxd's guest agent: a persistent interpreter per context, like a notebook kernel.
# Run as `python3 -u -c <this source>` (bundled into the agent as text; driven by python-kernel.ts).
#
# Channel: fd 3 carries requests from the agent, fd 4 answers; each message is a 4-byte big-endian length and
# UTF-8 JSON. stdout/stderr are the process's own fds 1/2 (so output of subprocesses and C extensions is
# captured too); after each run the kernel writes `\0sandboxd-end-<seq>\0` to both, so the agent knows where a
# run's output ends even though the two pipes and the channel are read independently.
#
# Requests: {type: 'run', seq, code, scratch?} -> {type: 'result', seq, result, error, executionCount, cpuMs};
# a `scratch` run takes the same path in a namespace of its own that is dropped afterwards, and does not count
# (the agent warms a spare interpreter with it: under TCG, code that runs for the first time in a VM is
# translated first, so the first real cell would pay for it);
# {type: 'reseed', seq} -> {type: 'reseeded', seq}. At start the kernel sends {type: 'ready', pid}.
# SIGINT raises KeyboardInterrupt only while user code runs; elsewhere it is ignored, so a late interrupt can
# never hit the kernel's own loop or the next run.
import ast, builtins, json, linecache, os, resource, signal, struct, sys, traceback

CONTROL_IN = 3
CONTROL_OUT = 4
MAX_RESULT_CHARS = 1000000

sys.argv = [""]
namespace = {"__name__": "__main__", "__builtins__": builtins}
state = {"running": False, "count": 0, "loop": None}


def on_interrupt(signum, frame):
    if state["running"]:
        raise KeyboardInterrupt


signal.signal(signal.SIGINT, on_interrupt)


def read_exact(size):
    chunks = []
    while size > 0:
        chunk = os.read(CONTROL_IN, size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def receive():
    header = read_exact(4)
    if header is None:
        return None
    (length,) = struct.unpack(">I", header)
    body = read_exact(length)
    return None if body is None else json.loads(body)


def send(message):
    data = json.dumps(message).encode()
    view = memoryview(struct.pack(">I", len(data)) + data)
    while view:
        view = view[os.write(CONTROL_OUT, view) :]


def cpu_seconds():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def describe(exc):
    tb = exc.__traceback__
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<cell-"):
        tb = tb.tb_next
    if tb is None:
        lines = traceback.format_exception_only(type(exc), exc)
    else:
        lines = traceback.format_exception(type(exc), exc, tb)
    return {"name": type(exc).__name__, "value": str(exc), "traceback": "".join(lines)}


def evaluate(code, target):
    value = eval(code, target)
    if code.co_flags & 0x80:  # CO_COROUTINE: the cell used top-level await
        if state["loop"] is None:
            import asyncio

            state["loop"] = asyncio.new_event_loop()
        value = state["loop"].run_until_complete(value)
    return value


def run(seq, code, scratch):
    if scratch:
        target = {"__name__": "__main__", "__builtins__": builtins}
        filename = "<warm-up>"
    else:
        target = namespace
        state["count"] += 1
        filename = "<cell-%d>" % state["count"]
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    result = None
    error = None
    started = cpu_seconds()
    try:
        tree = ast.parse(code, filename=filename, mode="exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(body=tree.body.pop().value)
        flags = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
        body = compile(tree, filename, "exec", flags=flags)
        tail = compile(last, filename, "eval", flags=flags) if last is not None else None
        state["running"] = True
        try:
            evaluate(body, target)
            if tail is not None:
                value = evaluate(tail, target)
                if value is not None:
                    target["_"] = value
                    result = repr(value)
                    if len(result) > MAX_RESULT_CHARS:
                        result = result[:MAX_RESULT_CHARS] + "... [truncated]"
        finally:
            state["running"] = False
    except BaseException as exc:
        state["running"] = False
        error = describe(exc)
    cpu_ms = (cpu_seconds() - started) * 1000.0
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass
    marker = ("\0sandboxd-end-%d\0" % seq).encode()
    for fd in (1, 2):
        try:
            os.write(fd, marker)
        except OSError:
            pass
    send(
        {
            "type": "result",
            "seq": seq,
            "result": result,
            "error": error,
            "executionCount": state["count"],
            "cpuMs": cpu_ms,
        }
    )


def reseed(seq):
    # A kernel started before a snapshot shares its random state with every clone of that snapshot. Only
    # modules already imported carry such state (an import after the restore seeds itself from the reseeded
    # kernel RNG), and importing them here would cost hundreds of milliseconds under TCG.
    random_module = sys.modules.get("random")
    if random_module is not None:
        random_module.seed()
    tempfile_module = sys.modules.get("tempfile")
    if tempfile_module is not None:
        tempfile_module._name_sequence = None
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        try:
            numpy_random.seed(int.from_bytes(os.urandom(4), "little"))
        except Exception:
            pass
    send({"type": "reseeded", "seq": seq})


send({"type": "ready", "pid": os.getpid()})
while True:
    message = receive()
    if message is None:
        break
    if message["type"] == "run":
        run(message["seq"], message["code"], message.get("scratch", False))
    elif message["type"] == "reseed":
        reseed(message["seq"])
