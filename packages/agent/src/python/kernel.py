# The Python kernel of sandboxd's guest agent: a persistent interpreter per context, like a notebook kernel.
# Run as `python3 -u -c <this source>` (bundled into the agent as text; driven by python-kernel.ts).
#
# Channel: fd 3 carries requests from the agent, fd 4 answers; each message is a 4-byte big-endian length and
# UTF-8 JSON. stdout/stderr are the process's own fds 1/2 (so output of subprocesses and C extensions is
# captured too); after each run the kernel writes `\0sandboxd-end-<seq>\0` to both, so the agent knows where a
# run's output ends even though the two pipes and the channel are read independently.
#
# Requests: {type: 'run', seq, code, scratch?, cwd?} -> {type: 'result', seq, result, results, error, executionCount, cpuMs};
# `results` are the cell's rich results, as a notebook shows them: what `display()` was given, the figures matplotlib
# left open, then the last expression's value (`isMainResult`), each as its formats (`text`, `html`, `png`, ...;
# images base64); `cwd` is where a new context starts (the agent sends it with a context's first run);
# a `scratch` run takes the same path in a namespace of its own that is dropped afterwards, and does not count
# (the agent warms a spare interpreter with it: under TCG, code that runs for the first time in a VM is
# translated first, so the first real cell would pay for it);
# {type: 'reseed', seq} -> {type: 'reseeded', seq}. At start the kernel sends {type: 'ready', pid}.
# SIGINT raises KeyboardInterrupt only while user code runs; elsewhere it is ignored, so a late interrupt can
# never hit the kernel's own loop or the next run.
import ast, base64, builtins, io, json, linecache, os, resource, signal, struct, sys, traceback

CONTROL_IN = 3
CONTROL_OUT = 4
MAX_RESULT_CHARS = 1000000
# All of one run's rich results together, in characters (base64 images count as sent): the rest are dropped.
MAX_RESULTS_CHARS = 16 * 1024 * 1024

# matplotlib draws to memory (no display here); the figures a cell leaves open become its results.
os.environ.setdefault("MPLBACKEND", "Agg")

sys.argv = [""]
namespace = {"__name__": "__main__", "__builtins__": builtins}
state = {"running": False, "count": 0, "loop": None, "results": None, "results_chars": 0}

# A representation method (IPython's protocol, which pandas, matplotlib, PIL and others implement) and the key its
# format has in a result; binary formats are base64.
REPR_METHODS = (
    ("_repr_html_", "html", False),
    ("_repr_markdown_", "markdown", False),
    ("_repr_svg_", "svg", False),
    ("_repr_png_", "png", True),
    ("_repr_jpeg_", "jpeg", True),
    ("_repr_pdf_", "pdf", True),
    ("_repr_latex_", "latex", False),
    ("_repr_json_", "json", False),
    ("_repr_javascript_", "javascript", False),
)
MIME_KEYS = {
    "text/plain": ("text", False),
    "text/html": ("html", False),
    "text/markdown": ("markdown", False),
    "image/svg+xml": ("svg", False),
    "image/png": ("png", True),
    "image/jpeg": ("jpeg", True),
    "application/pdf": ("pdf", True),
    "text/latex": ("latex", False),
    "application/json": ("json", False),
    "application/javascript": ("javascript", False),
}


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


def encode(value, binary):
    """A format's content as JSON carries it: binary as base64 (a str is taken as base64 already, as IPython
    allows), JSON data as is, anything else as text."""
    if binary:
        return value if isinstance(value, str) else base64.b64encode(bytes(value)).decode("ascii")
    return value if isinstance(value, (str, dict, list)) else str(value)


def is_figure(value):
    kind = type(value)
    return kind.__name__ == "Figure" and kind.__module__.startswith("matplotlib")


def figure_png(figure):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def formats_of(value):
    """Every format `value` shows itself in; a failing representation method is skipped, as IPython does."""
    formats = {}
    text = repr(value)
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + "... [truncated]"
    formats["text"] = text
    if is_figure(value):
        try:
            formats["png"] = figure_png(value)
        except Exception:
            pass
        return formats
    bundle = getattr(value, "_repr_mimebundle_", None)
    if callable(bundle) and not isinstance(value, type):
        try:
            data = bundle()
            data = data[0] if isinstance(data, tuple) else data
            for mime, content in (data or {}).items():
                key = MIME_KEYS.get(mime)
                if key is not None and content is not None:
                    formats[key[0]] = encode(content, key[1])
        except Exception:
            pass
    for method, key, binary in REPR_METHODS:
        if key in formats or isinstance(value, type):
            continue
        render = getattr(value, method, None)
        if not callable(render):
            continue
        try:
            content = render()
        except Exception:
            continue
        if isinstance(content, tuple):
            content = content[0]  # (data, metadata)
        if content is not None:
            formats[key] = encode(content, binary)
    return formats


def add_result(formats, main):
    results = state["results"]
    if results is None:
        return
    size = sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in formats.values())
    if state["results_chars"] + size > MAX_RESULTS_CHARS:
        formats = {
            "text": "[a result of %d characters was left out: the run's results passed %d]" % (size, MAX_RESULTS_CHARS)
        }
        size = len(formats["text"])
    state["results_chars"] += size
    formats["isMainResult"] = main
    results.append(formats)


def display(*values, **_options):
    """Shows values as results of the running cell, as IPython's `display` does (outside a cell: nothing)."""
    for value in values:
        if is_figure(value):
            # Shown now, so not again with the figures the cell leaves open.
            setattr(value, "_sandboxd_shown", True)
        add_result(formats_of(value), False)


builtins.display = display


def collect_figures(main_value):
    """The figures a cell left open become results (matplotlib's inline backend does the same), then close."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    try:
        for number in pyplot.get_fignums():
            figure = pyplot.figure(number)
            if figure is main_value or getattr(figure, "_sandboxd_shown", False):
                continue
            try:
                add_result({"text": repr(figure), "png": figure_png(figure)}, False)
            except Exception as exc:
                add_result({"text": "[the figure could not be drawn: %s]" % exc}, False)
        pyplot.close("all")
    except Exception:
        pass


def evaluate(code, target):
    value = eval(code, target)
    if code.co_flags & 0x80:  # CO_COROUTINE: the cell used top-level await
        if state["loop"] is None:
            import asyncio

            state["loop"] = asyncio.new_event_loop()
        value = state["loop"].run_until_complete(value)
    return value


def run(seq, code, scratch, cwd):
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
    value = None
    main = None
    state["results"] = []
    state["results_chars"] = 0
    started = cpu_seconds()
    try:
        if cwd:
            os.chdir(cwd)
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
        finally:
            state["running"] = False
        if value is not None:
            target["_"] = value
            main = formats_of(value)  # a failing __repr__ is the run's error, as in a plain interpreter
    except BaseException as exc:
        state["running"] = False
        error = describe(exc)
    collect_figures(value)
    if main is not None:
        result = main["text"]
        add_result(main, True)
    results = state["results"]
    state["results"] = None
    send_result(seq, result, results, error, (cpu_seconds() - started) * 1000.0)


def send_result(seq, result, results, error, cpu_ms):
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
            "results": results,
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
        run(message["seq"], message["code"], message.get("scratch", False), message.get("cwd"))
    elif message["type"] == "reseed":
        reseed(message["seq"])
