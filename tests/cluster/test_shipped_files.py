import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.shipped_files_helpers import ROOT, unit_settings


@pytest.mark.skipif(
    __import__("shutil").which("systemd-analyze") is None, reason="systemd-analyze not installed"
)
@pytest.mark.slow
def test_systemd_unit_verifies(tmp_path: Path) -> None:
    import shutil
    import subprocess

    nadird = shutil.which("nadird")
    assert nadird is not None
    unit = (ROOT / "systemd" / "nadird@.service").read_text()
    assert "Type=notify" in unit and "ExecReload=/bin/kill -HUP $MAINPID" in unit
    instance = tmp_path / "nadird@master.service"
    instance.write_text(unit.replace("/usr/local/bin/nadird", nadird))
    proc = subprocess.run(
        ["systemd-analyze", "verify", str(instance)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


def fake_nadird(path: Path, interpreter: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!{interpreter}\nexec {sys.executable} -m nadird "$@"\n')
    path.chmod(0o755)
    return path


def run_installer(destdir: Path, nadird: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DESTDIR": str(destdir), "NADIRD_BIN": str(nadird)}
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "install-systemd.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_installer_puts_everything_the_unit_names_in_place(tmp_path: Path) -> None:
    nadird = fake_nadird(tmp_path / "opt" / "nadird" / "bin" / "nadird", "/bin/sh")
    root = tmp_path / "root"
    proc = run_installer(root, nadird)
    assert proc.returncode == 0, proc.stderr
    unit = (root / "etc" / "systemd" / "system" / "nadird@.service").read_text()
    assert f"ExecStart={nadird} --role %i -c /etc/nadird/%i.yaml" in unit
    for doc in unit_settings()["Documentation"]:
        assert doc.startswith("file:///"), doc
        assert (root / doc.removeprefix("file:///")).is_file(), doc
    for role in ("master", "worker"):
        assert (root / "etc" / "nadird" / f"{role}.yaml").read_text() == (
            ROOT / "configs" / f"{role}.yaml"
        ).read_text()
        secret = root / "etc" / "nadird" / "keys" / f"{role}.key_secret"
        assert secret.stat().st_mode & 0o777 == 0o600
        assert (
            f"/etc/nadird/keys/{role}.key_secret" in (ROOT / "configs" / f"{role}.yaml").read_text()
        )
    if shutil.which("systemd-analyze"):
        instance = tmp_path / "nadird@worker.service"
        instance.write_text(unit)
        verify = subprocess.run(
            ["systemd-analyze", "verify", str(instance)], capture_output=True, text=True, timeout=60
        )
        assert verify.returncode == 0, verify.stderr
    again = run_installer(root, nadird)  # keys and configs are kept, not replaced
    assert again.returncode == 0, again.stderr
    assert secret.read_bytes() == (root / "etc/nadird/keys/worker.key_secret").read_bytes()


def fake_python(bin_dir: Path) -> None:
    """`python3 -m venv DIR` and DIR/bin/pip as far as the installer uses them:
    the venv's entry script names DIR's interpreter, as pip writes it (so
    under DESTDIR when the venv is made there); that interpreter is a shell
    running the test's nadird."""
    bin_dir.mkdir(parents=True)
    pip = bin_dir / "pip.in"
    pip.write_text(
        "#!/bin/sh\n"
        f"printf '#!%s\\nexec %s -m nadird \"$@\"\\n' @DIR@/bin/python3 {sys.executable}"
        " > @DIR@/bin/nadird\n"
        "chmod 755 @DIR@/bin/nadird\n"
    )
    python = bin_dir / "python3"
    python.write_text(
        "#!/bin/sh\n"
        '[ "$1 $2" = "-m venv" ] || exit 64\n'
        'mkdir -p "$3/bin" && ln -s /bin/sh "$3/bin/python3"\n'
        f'sed "s#@DIR@#$3#g" {pip} > "$3/bin/pip" && chmod 755 "$3/bin/pip"\n'
    )
    python.chmod(0o755)


@pytest.mark.slow
def test_a_venv_made_under_destdir_names_the_installed_interpreter(tmp_path: Path) -> None:
    """The entry script kept the DESTDIR prefix in its #! line, so the
    installed service could not start."""
    fake_python(tmp_path / "fakebin")
    root = tmp_path / "root"
    env = {
        **os.environ,
        "DESTDIR": str(root),
        "PATH": f"{tmp_path / 'fakebin'}:{os.environ['PATH']}",
    }
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "install-systemd.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    script = root / "opt" / "nadird" / "bin" / "nadird"
    assert script.read_text().splitlines()[0] == "#!/opt/nadird/bin/python3"
    assert (root / "etc" / "nadird" / "keys" / "master.key_secret").exists()
    # The manual, not only the README (a landing page), is what the unit points at.
    doc = root / "usr" / "share" / "doc" / "nadird"
    assert (doc / "operations" / "service.md").read_text() == (
        ROOT / "docs" / "operations" / "service.md"
    ).read_text()
    assert (doc / "index.md").is_file() and not list(doc.rglob("*.py"))


@pytest.mark.slow
def test_installer_refuses_a_nadird_that_protect_home_hides(tmp_path: Path) -> None:
    in_home = Path("/home/nobody/.local/bin/nadird")  # refused before it is looked at
    run_by_home_python = fake_nadird(tmp_path / "opt" / "bin" / "nadird", "/root/venv/bin/python3")
    for nadird in (in_home, run_by_home_python):
        proc = run_installer(tmp_path / "root", nadird)
        assert proc.returncode == 2
        assert "ProtectHome" in proc.stderr, proc.stderr
        assert not (tmp_path / "root" / "etc").exists()


@pytest.mark.slow
def test_installer_lets_the_master_write_its_file_replica(tmp_path: Path) -> None:
    bin_dir = tmp_path / "opt" / "nadird" / "bin"
    nadird = fake_nadird(bin_dir / "nadird", "/bin/sh")
    (bin_dir / "python").symlink_to(sys.executable)  # a venv's, with PyYAML
    root = tmp_path / "root"
    (root / "etc" / "nadird").mkdir(parents=True)
    master = "master:\n  state_dir: /var/lib/nadird\n  replica: file:///mnt/replica/nadird\n"
    (root / "etc" / "nadird" / "master.yaml").write_text(master)
    proc = run_installer(root, nadird)
    assert proc.returncode == 0, proc.stderr
    dropin = root / "etc/systemd/system/nadird@master.service.d/replica.conf"
    assert dropin.read_text().splitlines()[1:] == [
        "[Service]",
        "ReadWritePaths=/mnt/replica/nadird",
    ]
    assert (root / "mnt" / "replica" / "nadird").is_dir()
    assert (root / "etc" / "nadird" / "master.yaml").read_text() == master  # kept
    # Without a file:// replica, no drop-in.
    other = tmp_path / "other"
    assert run_installer(other, nadird).returncode == 0
    assert not (other / "etc/systemd/system/nadird@master.service.d").exists()
