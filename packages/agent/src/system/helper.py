# The privileged helper of sandboxd's guest agent: a small process started once at agent boot (so it is already
# running inside a snapshot) that makes the system calls Node cannot: clock_settime, the RNG ioctls, sethostname,
# mount. Run as `python3 -c <this source> [--dry-run]` (bundled into the agent as text; driven by
# privileged-helper.ts).
#
# Channel: stdin/stdout, 4-byte big-endian length + UTF-8 JSON. Requests carry an `id` echoed in the answer.
# {op: 'restore', wallClockMs?, entropy?, hostname?, newMachineId?, newBootId?} -> {ok, applied, clockStepMs}; with
# newMachineId, /etc/machine-id gets a fresh value drawn after the entropy was credited, with newBootId the kernel's
# boot id as the guest reads it. {op: 'entropy', entropy} and {op: 'ping'} likewise; {op: 'mount-9p', tag, target}
# mounts a virtio-9p share (mount(2) through ctypes: a mount(8) process costs about 100 ms under TCG);
# {op: 'umount', target} unmounts whatever is mounted there (nothing mounted: no error). With --dry-run (tests on a
# host) nothing is changed, `applied` is false, and mounts fail. Errors answer {ok: false, error}.
import base64, errno, fcntl, json, os, socket, struct, sys, time

DRY_RUN = "--dry-run" in sys.argv
RNDADDENTROPY = 0x40085203  # _IOW('R', 0x03, int[2])
RNDRESEEDCRNG = 0x5207  # _IO('R', 0x07)
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND = 2, 4, 8, 4096
# The kernel draws its boot id at the first read and never changes it (the file cannot be written): a clone of a VM
# that read it would see its source's. So a restore binds a file of its own over it, and later restores rewrite
# that file (a bind mount shows the file's current contents).
BOOT_ID_PROC = "/proc/sys/kernel/random/boot_id"
BOOT_ID_FILE = "/run/sandboxd-boot-id"
# 512 KiB per 9p request: the most the virtio transport carries in one go (fewer requests, fewer exits).
NINEP_OPTIONS = "trans=virtio,version=9p2000.L,msize=524288,cache=none"
IN = sys.stdin.buffer
OUT = sys.stdout.buffer
urandom = None


def read_exact(size):
    data = IN.read(size)
    return data if data is not None and len(data) == size else None


def send(message):
    data = json.dumps(message).encode()
    OUT.write(struct.pack(">I", len(data)) + data)
    OUT.flush()


def add_entropy(raw):
    global urandom
    if urandom is None:
        urandom = os.open("/dev/urandom", os.O_WRONLY)
    # struct rand_pool_info { int entropy_count; int buf_size; __u32 buf[]; }, credited in bits. A mutable
    # buffer is passed to the kernel directly (an immutable one is limited to 1024 bytes).
    request = bytearray(struct.pack("ii", len(raw) * 8, len(raw)) + raw)
    fcntl.ioctl(urandom, RNDADDENTROPY, request, True)
    # Make the CRNG use the new input now instead of at its next scheduled reseed.
    fcntl.ioctl(urandom, RNDRESEEDCRNG)


def set_hostname(name):
    socket.sethostname(name)
    try:
        with open("/etc/hosts") as hosts:
            lines = hosts.read().splitlines()
        lines = [line for line in lines if not line.startswith("127.0.1.1")]
        lines.append("127.0.1.1\t" + name)
        with open("/etc/hosts", "w") as hosts:
            hosts.write("\n".join(lines) + "\n")
    except OSError:
        pass


def renew_machine_id():
    # systemd's format: 32 lowercase hex digits and a newline. /etc/machine-id is a symlink into /run in the image, so
    # this write stays in memory. D-Bus keeps a copy of its own where it is installed (unless it is a symlink).
    value = os.urandom(16).hex() + "\n"
    with open("/etc/machine-id", "w") as machine_id:
        machine_id.write(value)
    dbus = "/var/lib/dbus/machine-id"
    if os.path.exists(dbus) and not os.path.islink(dbus):
        with open(dbus, "w") as machine_id:
            machine_id.write(value)


def libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def os_error(what):
    import ctypes

    code = ctypes.get_errno()
    return OSError(code, "%s: %s" % (what, os.strerror(code)))


def mounted_at(target):
    with open("/proc/self/mounts") as mounts:
        return any(len(line.split()) > 1 and line.split()[1] == target for line in mounts)


def renew_boot_id():
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    text = raw.hex()
    value = "-".join([text[:8], text[8:12], text[12:16], text[16:20], text[20:]]) + "\n"
    with open(BOOT_ID_FILE, "w") as boot_id:
        boot_id.write(value)
    os.chmod(BOOT_ID_FILE, 0o444)
    if not mounted_at(BOOT_ID_PROC):
        if libc().mount(BOOT_ID_FILE.encode(), BOOT_ID_PROC.encode(), None, MS_BIND, None) != 0:
            raise os_error("bind %s" % BOOT_ID_PROC)


def umount(target):
    while mounted_at(target):
        if libc().umount2(target.encode(), 0) != 0:
            raise os_error("umount %s" % target)


def mount_9p(tag, target):
    # Mounted already (by an earlier agent process)? A virtio-9p channel serves one mount only.
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            if len(fields) > 2 and fields[0] == tag and fields[1] == target and fields[2] == "9p":
                return
    os.makedirs(target, mode=0o700, exist_ok=True)
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    if libc().mount(tag.encode(), target.encode(), b"9p", flags, NINEP_OPTIONS.encode()) != 0:
        raise os_error("%s: mount %s" % (target, tag))


def handle(message):
    op = message.get("op")
    answer = {"ok": True, "applied": not DRY_RUN, "clockStepMs": 0}
    if op == "ping":
        return answer
    if op == "mount-9p":
        if DRY_RUN:
            raise OSError(errno.EPERM, "dry run: no mounts")
        mount_9p(str(message["tag"]), str(message["target"]))
        return answer
    if op == "umount":
        if not DRY_RUN:
            umount(str(message["target"]))
        return answer
    if op not in ("restore", "entropy"):
        raise ValueError("unknown op %r" % op)
    if message.get("entropy"):
        raw = base64.b64decode(message["entropy"])
        if not DRY_RUN:
            add_entropy(raw)
    if op == "restore":
        if message.get("wallClockMs") is not None:
            target = int(message["wallClockMs"]) * 1000000
            before = time.clock_gettime_ns(time.CLOCK_REALTIME)
            if not DRY_RUN:
                time.clock_settime_ns(time.CLOCK_REALTIME, target)
            answer["clockStepMs"] = (target - before) / 1000000.0
        if message.get("hostname") and not DRY_RUN:
            set_hostname(message["hostname"])
        if message.get("newMachineId") and not DRY_RUN:
            renew_machine_id()
        if message.get("newBootId") and not DRY_RUN:
            renew_boot_id()
    return answer


while True:
    header = read_exact(4)
    if header is None:
        break
    (length,) = struct.unpack(">I", header)
    body = read_exact(length)
    if body is None:
        break
    message = json.loads(body)
    try:
        answer = handle(message)
    except Exception as error:
        answer = {"ok": False, "error": "%s: %s" % (type(error).__name__, error)}
    answer["id"] = message.get("id")
    send(answer)
