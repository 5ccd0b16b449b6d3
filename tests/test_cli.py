import subprocess
import sys


def test_svoyak_help_runs():
    out = subprocess.run([sys.executable, "-m", "svoyak.cli", "--help"],
                         capture_output=True, text=True, check=True)
    assert "svoyak" in out.stdout
