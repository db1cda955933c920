#!/bin/sh
# Build DXENG.COM, the DOS engine that `dxserial demo --dos` and the DOSBox tests run.
# Needs bcc (Debian/Ubuntu: sudo apt-get install bcc). Output: dos/build/DXENG.COM, where
# dxserial looks for it in a checkout, or DIR/DXENG.COM with `build.sh DIR` (then set
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
