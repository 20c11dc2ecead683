#!/usr/bin/env bash
# On the GPU machine, after `source .gpu/prelude.sh`: restores .gpu/bin from .gpu/bin.tar.xz
# (python's tarfile: the image need not have xz).
set -euo pipefail
[ -d .gpu/bin ] || python3 -c "import tarfile; tarfile.open('.gpu/bin.tar.xz').extractall('.gpu')"
ls .gpu/bin
