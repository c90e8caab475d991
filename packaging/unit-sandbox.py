#!/usr/bin/env python3
"""Runs a command under the sandbox of packaging/overdue.service, as far as it can be built
without systemd, so that CI can smoke-test the binary under the unit's restrictions on machines
where systemd cannot start services (containers, CI sandboxes).

Usage: packaging/unit-sandbox.py [--verbose] [--unit FILE] COMMAND [ARG...]
  packaging/smoke-test.sh target/x86_64-unknown-linux-musl/dist/overdue packaging/unit-sandbox.py

What it applies, in this order, then executes COMMAND in place (the same PID, so the smoke
test's `$!` is still the service):
  - ProcSubset=pid and ProtectProc=invisible: a new mount namespace (PrivateMounts=yes) with
    /proc mounted again with subset=pid,hidepid=invisible (needs root; skipped otherwise);
  - PrivateUsers=yes: a new user namespace that maps only the caller's user and group, so
    capabilities work only inside it (needs user namespaces; skipped when refused);
  - NoNewPrivileges=yes and SystemCallFilter=: the unit's own SystemCallFilter= lines, read from
    the unit file (an allow list, then ~ deny lists, with @default added to an allow list as
    systemd adds it), the @groups expanded by `systemd-analyze syscall-filter` (the groups of
    the systemd that would enforce them), loaded through libseccomp with the action systemd
    uses: any other system call kills the process with SIGSYS. SystemCallArchitectures=native
    is libseccomp's default (only the native ABI is allowed).
With --verbose it prints one line to stderr saying which of these it applied and which it
had to skip.

Not reproduced: DynamicUser (the command keeps the caller's user), ProtectSystem,
ProtectHome, PrivateTmp, PrivateDevices, the Protect* kernel settings, RestrictAddressFamilies,
RestrictNamespaces, MemoryDenyWriteExecute and the capability bounding set.
"""

import ctypes
import ctypes.util
import os
import re
import subprocess
import sys

SCMP_ACT_KILL_PROCESS = 0x80000000
SCMP_ACT_ALLOW = 0x7FFF0000
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18

DEFAULT_UNIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "overdue.service")


def die(message):
    print(f"unit-sandbox: {message}", file=sys.stderr)
    sys.exit(2)


def unit_filter(unit):
    """The SystemCallFilter= entries of the unit, in order, as (deny, name) pairs."""
    entries = []
    with open(unit, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*SystemCallFilter=(.*)$", line)
            if not m:
                continue
            value = m.group(1).strip()
            if not value:
                entries = []
                continue
            deny = value.startswith("~")
            entries.extend((deny, name) for name in value.lstrip("~").split())
    if not entries:
        die(f"{unit} has no SystemCallFilter= line")
    return entries


def syscall_groups():
    """Every @group of this systemd and its members (names and nested @groups)."""
    out = subprocess.run(
        ["systemd-analyze", "syscall-filter"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    groups, current = {}, None
    for line in out.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), [])
        elif not line.strip():
            current = None
        elif current is not None and not line.strip().startswith("#"):
            current.append(line.strip())
    return groups


def expand(name, groups, seen=None):
    seen = set() if seen is None else seen
    if not name.startswith("@"):
        return {name}
    if name in seen:
        return set()
    seen.add(name)
    if name not in groups:
        die(f"systemd-analyze does not know the group {name}")
    calls = set()
    for member in groups[name]:
        calls |= expand(member, groups, seen)
    return calls


def allowed_calls(entries):
    """The system calls the unit allows, as systemd computes them."""
    groups = syscall_groups()
    if entries[0][0]:
        die("a deny list without an allow list is not reproduced")
    calls = expand("@default", groups)
    for deny, name in entries:
        if deny:
            calls -= expand(name, groups)
        else:
            calls |= expand(name, groups)
    return calls


def libc():
    lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return lib


def private_proc(c):
    """A mount namespace of our own, with /proc showing processes only."""
    if c.unshare(CLONE_NEWNS) != 0:
        return f"no mount namespace ({os.strerror(ctypes.get_errno())})"
    if c.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return f"mounts not private ({os.strerror(ctypes.get_errno())})"
    if c.mount(b"proc", b"/proc", b"proc", 0, b"subset=pid,hidepid=invisible") != 0:
        return f"/proc not remounted ({os.strerror(ctypes.get_errno())})"
    return None


def private_users(c):
    """A user namespace that maps only our own user and group."""
    uid, gid = os.geteuid(), os.getegid()
    if c.unshare(CLONE_NEWUSER) != 0:
        return f"no user namespace ({os.strerror(ctypes.get_errno())})"
    try:
        for name, text in [
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1"),
            ("gid_map", f"{gid} {gid} 1"),
        ]:
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError as e:
        # Half made: the process would run as nobody; better not run it at all.
        die(f"cannot map the user namespace: {e}")
    return None


def load_filter(calls):
    path = ctypes.util.find_library("seccomp")
    if not path:
        die("libseccomp not found (Debian: libseccomp2)")
    lib = ctypes.CDLL(path)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(SCMP_ACT_KILL_PROCESS)
    if not ctx:
        die("seccomp_init failed")
    added = 0
    for name in sorted(calls):
        nr = lib.seccomp_syscall_resolve_name(name.encode())
        # Unknown on this architecture: systemd skips it too.
        if nr < 0:
            continue
        if lib.seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) == 0:
            added += 1
    # Sets no_new_privs first (libseccomp's default), as NoNewPrivileges=yes does.
    rc = lib.seccomp_load(ctx)
    if rc != 0:
        die(f"seccomp_load failed: {os.strerror(-rc)}")
    return added


def main():
    args = sys.argv[1:]
    verbose = args[:1] == ["--verbose"]
    if verbose:
        args = args[1:]
    unit = DEFAULT_UNIT
    if args[:1] == ["--unit"]:
        if len(args) < 2:
            die("--unit needs a file")
        unit, args = args[1], args[2:]
    if not args:
        die("usage: unit-sandbox.py [--verbose] [--unit FILE] COMMAND [ARG...]")
    calls = allowed_calls(unit_filter(unit))
    c = libc()
    applied, skipped = [], []
    if os.geteuid() == 0:
        why = private_proc(c)
        (skipped if why else applied).append(why or "/proc subset=pid,hidepid=invisible")
    else:
        skipped.append("/proc remount (needs root)")
    why = private_users(c)
    (skipped if why else applied).append(why or "private user namespace")
    added = load_filter(calls)
    applied.append(f"seccomp allow list of {added} system calls from {os.path.basename(unit)}")
    note = f"; skipped: {', '.join(skipped)}" if skipped else ""
    if verbose:
        print(f"unit-sandbox: {', '.join(applied)}{note}", file=sys.stderr)
    try:
        os.execvp(args[0], args)
    except OSError as e:
        die(f"cannot run {args[0]}: {e}")


if __name__ == "__main__":
    main()
