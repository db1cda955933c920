#!/bin/sh
# Build DXENG.COM, the DOS engine that `dxserial demo --dos` and the DOSBox tests run.
# Needs bcc (Debian/Ubuntu: sudo apt-get install bcc). Output: dos/build/DXENG.COM, and a
# copy in ${XDG_DATA_HOME:-~/.local/share}/dxserial/, where an installed dxserial (not only
# one run from this checkout) looks for it. `build.sh DIR`: DIR/DXENG.COM only (then set
# DXSERIAL_DOS_ENGINE=DIR/DXENG.COM).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="${1:-$here/build}"
if ! command -v bcc >/dev/null 2>&1; then
    echo "dos/build.sh: bcc is not installed; install it with: sudo apt-get install bcc" >&2
    exit 1
fi
mkdir -p "$out"
# -Md: a DOS .COM (tiny model, 8086 code, bcc's DOS libc); the 8250 port I/O and the BIOS
# tick counter are inline as86 assembly in dxeng.c.
bcc -Md "$here/dxeng.c" -o "$out/DXENG.COM"
echo "built $out/DXENG.COM ($(wc -c < "$out/DXENG.COM") bytes)"
if [ $# -eq 0 ]; then
    data="${XDG_DATA_HOME:-$HOME/.local/share}/dxserial"
    mkdir -p "$data"
    cp "$out/DXENG.COM" "$data/DXENG.COM.tmp" && mv "$data/DXENG.COM.tmp" "$data/DXENG.COM"
    echo "installed $data/DXENG.COM (dxserial demo --dos finds it there)"
fi
