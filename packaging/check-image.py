#!/usr/bin/env python3
"""Checks a saved container image (packaging/build-image.sh) without a container runtime:
podman builds images on CI machines where it cannot start containers (setrlimit is refused).

Usage: packaging/check-image.py dist/overdue-image-VERSION-ARCH.tar

1. The image's configuration: user 65532, OVERDUE_DATA=/data, OVERDUE_LISTEN=0.0.0.0:8000, the
   /data volume, `/overdue serve` as the command and `/overdue health` as the health check.
2. Its files, with the layers unpacked in order: the static binary, CA roots, the user in
   /etc/passwd, /data owned by 65532 with mode 0700.
3. The binary taken out of it through packaging/smoke-test.sh.
4. As root (CI): the unpacked image run as the container runs it, chrooted into the image as
   user 65532 with the image's environment (but listening on 127.0.0.1): `serve` starts on the
   empty /data, and `/overdue health`, the HEALTHCHECK, passes; then a clean stop.
Exits 0 when all pass.
"""

import json
import os
import socket
import stat
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
USER = 65532


def fail(message):
    print(f"check-image: {message}", file=sys.stderr)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def unpack(archive, into):
    """The image's configuration; its layers unpacked into `into`."""
    with tarfile.open(archive) as saved:
        manifest = json.load(saved.extractfile("manifest.json"))
        expect(len(manifest) == 1, f"one image expected in {archive}, found {len(manifest)}")
        image = manifest[0]
        config = json.load(saved.extractfile(image["Config"]))
        for name in image["Layers"]:
            with tarfile.open(fileobj=saved.extractfile(name)) as layer:
                for member in layer.getmembers():
                    base = os.path.basename(member.name)
                    expect(not base.startswith(".wh."), f"whiteout {member.name} in a scratch image")
                try:
                    layer.extractall(into, numeric_owner=True, filter="fully_trusted")
                except TypeError:  # a Python from before extraction filters
                    layer.extractall(into, numeric_owner=True)
    return config


def check_config(config):
    c = config.get("config") or config.get("Config") or {}
    expect(c.get("User") == f"{USER}:{USER}", f"user: {c.get('User')!r}")
    env = c.get("Env") or []
    for wanted in ("OVERDUE_DATA=/data", "OVERDUE_LISTEN=0.0.0.0:8000"):
        expect(wanted in env, f"{wanted} not in {env}")
    expect("/data" in (c.get("Volumes") or {}), f"no /data volume: {c.get('Volumes')}")
    expect(c.get("Entrypoint") == ["/overdue"], f"entrypoint: {c.get('Entrypoint')}")
    expect(c.get("Cmd") == ["serve"], f"command: {c.get('Cmd')}")
    health = (c.get("Healthcheck") or {}).get("Test")
    expect(health == ["CMD", "/overdue", "health"], f"health check: {health}")
    return c


def check_files(root):
    binary = os.path.join(root, "overdue")
    expect(os.access(binary, os.X_OK), "no executable /overdue")
    described = subprocess.run(["file", "-b", binary], capture_output=True, text=True).stdout
    expect(
        "statically linked" in described or "static-pie linked" in described,
        f"/overdue is not static: {described}",
    )
    with open(os.path.join(root, "etc/ssl/certs/ca-certificates.crt")) as f:
        expect(f.read().count("BEGIN CERTIFICATE") > 50, "too few CA roots")
    with open(os.path.join(root, "etc/passwd")) as f:
        expect(f":{USER}:{USER}:" in f.read(), f"no user {USER} in /etc/passwd")
    data = os.stat(os.path.join(root, "data"))
    expect(stat.S_ISDIR(data.st_mode), "/data is not a directory")
    expect(data.st_uid == USER, f"/data belongs to {data.st_uid}, not {USER}")
    expect(stat.S_IMODE(data.st_mode) == 0o700, f"/data has mode {oct(data.st_mode)}")
    return binary


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_as_the_container(root, config):
    """Runs the unpacked image chrooted as its user, with its environment."""
    port = free_port()
    env = dict(e.split("=", 1) for e in config["Env"])
    env["OVERDUE_LISTEN"] = f"127.0.0.1:{port}"
    user = f"--userspec={USER}:{USER}"
    entry = config["Entrypoint"]
    serve = subprocess.Popen(
        ["chroot", user, root] + entry + config["Cmd"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        health = None
        for _ in range(200):
            if serve.poll() is not None:
                fail(f"serve exited with {serve.returncode}: {serve.stderr.read()}")
            health = subprocess.run(
                ["chroot", user, root] + entry + ["health"],
                env=env,
                capture_output=True,
                text=True,
            )
            if health.returncode == 0:
                break
            time.sleep(0.1)
        expect(health.returncode == 0, f"the health check never passed: {health.stderr}")
        serve.terminate()
        out, err = serve.communicate(timeout=30)
        expect(serve.returncode == 0, f"serve exited with {serve.returncode}: {err}")
        expect("read-write API key:" in out, f"no first-start keys: {out}")
        expect(
            os.path.exists(os.path.join(root, "data/overdue.redb")),
            "no data file in /data",
        )
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()


def main():
    if len(sys.argv) != 2:
        print("usage: check-image.py IMAGE.tar", file=sys.stderr)
        sys.exit(2)
    with tempfile.TemporaryDirectory() as root:
        # The image's / as the container sees it: the user must be able to traverse it.
        os.chmod(root, 0o755)
        config = check_config(unpack(sys.argv[1], root))
        print("check-image: configuration OK (user, environment, volume, command, health check)")
        binary = check_files(root)
        print("check-image: files OK (static /overdue, CA roots, /etc/passwd, /data 0700)")
        subprocess.run([os.path.join(HERE, "smoke-test.sh"), binary], check=True)
        if os.geteuid() == 0:
            run_as_the_container(root, config)
            print(f"check-image: chrooted as {USER}: serve on /data and the health check OK")
        else:
            print("check-image: not root: the chrooted run as the container is skipped")


if __name__ == "__main__":
    main()
