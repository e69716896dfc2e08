# The PTY relay of sandboxd's guest agent: owns one pseudo-terminal. Node has no PTY API (node-pty is a native
# addon, which a one-file bundle cannot carry), while Python's standard library has os.openpty, fork, setsid and
# the terminal ioctls; python3 is in every image. Run as `python3 -I -c <this source> COLS ROWS CWD PROGRAM [ARGS...]`
# (bundled into the agent as text; driven by terminal.ts).
#
# The relay sizes the terminal before the fork (so the program's first TIOCGWINSZ is right), starts the program
# as the leader of a new session with the terminal as its controlling tty, and then relays: fd 0 -> terminal
# input, terminal output -> fd 1; fd 3 and fd 4 carry length-prefixed JSON messages like the kernel's
# (json-pipe-channel.ts): control in on fd 3 ({"type": "resize", "cols", "rows"}), status out on fd 4
# ({"type": "started", "pid"}, then {"type": "exit", "exitCode", "signal"}). The program's end is noticed through
# SIGCHLD (via set_wakeup_fd, so it wakes the select loop); the output already written is drained before the exit
# message, and the relay exits right after it.
import errno, fcntl, json, os, select, signal, struct, sys, termios

CONTROL_IN = 3
STATUS_OUT = 4
CHUNK = 65536
MAX_PENDING_INPUT = 1 << 20


def set_size(fd, cols, rows):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def status(message):
    body = json.dumps(message).encode()
    write_all(STATUS_OUT, struct.pack(">I", len(body)) + body)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_some(fd):
    try:
        return os.read(fd, CHUNK)
    except BlockingIOError:
        return None
    except OSError as error:
        if error.errno == errno.EIO:
            return b""
        raise


cols, rows, cwd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
argv = sys.argv[4:]
master, slave = os.openpty()
set_size(slave, cols, rows)
wake_r, wake_w = os.pipe()
os.set_blocking(wake_r, False)
os.set_blocking(wake_w, False)
signal.set_wakeup_fd(wake_w)
signal.signal(signal.SIGCHLD, lambda signum, frame: None)

pid = os.fork()
if pid == 0:
    try:
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
            signal.signal(signum, signal.SIG_DFL)
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        os.closerange(3, 4096)
        os.chdir(cwd)
        os.execvpe(argv[0], argv, os.environ)
    except BaseException as error:
        try:
            os.write(2, ("sandboxd: cannot start %s: %s\r\n" % (argv[0], error)).encode())
        finally:
            os._exit(127)

os.close(slave)
status({"type": "started", "pid": pid})
for fd in (master, 0, CONTROL_IN):
    os.set_blocking(fd, False)
os.set_blocking(1, True)

pending = b""
control = b""
stdin_open = control_open = master_open = True
exit_status = None

while exit_status is None:
    readers = [wake_r]
    if master_open:
        readers.append(master)
    if stdin_open and len(pending) < MAX_PENDING_INPUT:
        readers.append(0)
    if control_open:
        readers.append(CONTROL_IN)
    writers = [master] if pending and master_open else []
    ready, writable, _ = select.select(readers, writers, [])
    if master in ready:
        data = read_some(master)
        if data:
            write_all(1, data)
        elif data == b"":
            # Every holder of the terminal closed it; the program's exit comes through SIGCHLD.
            master_open = False
    if master in writable:
        try:
            pending = pending[os.write(master, pending) :]
        except BlockingIOError:
            pass
        except OSError:
            pending = b""
    if 0 in ready:
        data = read_some(0)
        if data:
            pending += data
        elif data == b"":
            stdin_open = False
    if CONTROL_IN in ready:
        data = read_some(CONTROL_IN)
        if data == b"":
            control_open = False
        elif data:
            control += data
            while len(control) >= 4 and len(control) >= 4 + struct.unpack(">I", control[:4])[0]:
                size = struct.unpack(">I", control[:4])[0]
                body, control = control[4 : 4 + size], control[4 + size :]
                try:
                    message = json.loads(body)
                    if message.get("type") == "resize":
                        set_size(master, int(message["cols"]), int(message["rows"]))
                except (ValueError, KeyError, TypeError, AttributeError, OSError):
                    pass
    if wake_r in ready:
        while read_some(wake_r):
            pass
    done, exit_status_now = os.waitpid(pid, os.WNOHANG)
    if done == pid:
        exit_status = exit_status_now

# What the program wrote before it ended is still in the terminal's buffer: pass it on first.
while master_open:
    data = read_some(master)
    if not data:
        break
    write_all(1, data)

if os.WIFSIGNALED(exit_status):
    signum = os.WTERMSIG(exit_status)
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = "SIG%d" % signum
    status({"type": "exit", "exitCode": None, "signal": name})
else:
    status({"type": "exit", "exitCode": os.waitstatus_to_exitcode(exit_status), "signal": None})
