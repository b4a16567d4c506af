"""A scratch folder laid out as a clone with ../shared beside it, where the docs' commands run as a
new user would run them in theirs: repo/ links to what the source tree tracks and to the build (as
build/), shared/ is the authors' data, tmp/ and home/ are the run's own. What the commands write
(out/, example/, ...) stays in the scratch folder, and two runs never share one. Used by the docs
tests (tests/docs/docs_commands_test.py) and scripts/docs_images.py. Standard library only."""

from __future__ import annotations

import os
import subprocess
import tempfile


def tracked_entries(source: str) -> list[str]:
    """The top-level files and folders git tracks in `source` (what a clone has, not a build or a
    folder a command wrote there); where git is not installed or `source` is no checkout, every
    entry but .git, build*, out and dist."""
    try:
        listed = subprocess.run(["git", "-C", source, "ls-files", "-z"], capture_output=True)
        if listed.returncode == 0 and listed.stdout:
            return sorted({path.split("/", 1)[0] for path in listed.stdout.decode().split("\0") if path})
    except OSError:
        pass  # no git on this machine (scripts/install-deps.sh does not install it)
    return sorted(e for e in os.listdir(source) if e not in (".git", "out", "dist") and not e.startswith("build"))


def scratch_clone(source: str, build: str, shared: str, prefix: str) -> str:
    """Makes the scratch folder (see above) and returns its path; its clone is ROOT/repo."""
    root = tempfile.mkdtemp(prefix=prefix)
    repo = os.path.join(root, "repo")
    for folder in (repo, os.path.join(root, "tmp"), os.path.join(root, "home")):
        os.makedirs(folder)
    os.symlink(os.path.abspath(shared), os.path.join(root, "shared"))
    for entry in tracked_entries(source):
        os.symlink(os.path.join(os.path.abspath(source), entry), os.path.join(repo, entry))
    os.symlink(os.path.abspath(build), os.path.join(repo, "build"))
    return root
