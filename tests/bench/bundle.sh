#!/usr/bin/env bash
# Copies a built mstep, with the MPICH, UCX and library files it runs on, into one relocatable
# folder, for timing runs on a machine of more cores that has no MPICH installed (a lent machine of
# another distribution; its glibc must be at least this machine's).
#   tests/bench/bundle.sh BUILD_DIR OUT_DIR
# OUT_DIR gets build/{bin,lib,examples,bench} (stripped), share/ (the validation suite) and sys/ (MPICH's
# launcher, and every shared library those programs load that is not glibc's, UCX's transports
# in sys/lib/ucx; fuzz/ the model fuzzer when built). On the other machine:
#   . OUT_DIR/env.sh        # PATH, LD_LIBRARY_PATH, UCX_MODULE_DIR; then mstep, mpiexec.mpich as here
set -euo pipefail
build=$(cd "${1:?usage: bundle.sh BUILD_DIR OUT_DIR}" && pwd)
out=${2:?usage: bundle.sh BUILD_DIR OUT_DIR}
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out"
mkdir -p "$out"/build/{bin,lib,examples,bench} "$out"/sys/{bin,lib/ucx} "$out"/share
out=$(cd "$out" && pwd)

copy_stripped() { cp "$1" "$2" && strip --strip-debug "$2/$(basename "$1")" 2>/dev/null || true; }
for f in mstep mstep_calib; do copy_stripped "$build/bin/$f" "$out/build/bin"; done
copy_stripped "$build/lib/libmstep.so" "$out/build/lib"
for f in "$build"/examples/*; do [[ -x $f && -f $f ]] && copy_stripped "$f" "$out/build/examples"; done
for f in "$build"/bench/*; do [[ -x $f && -f $f ]] && copy_stripped "$f" "$out/build/bench"; done
cp -r "$src/share/validate" "$out/share/"

mpiexec=$(readlink -f "$(command -v mpiexec.mpich)")
cp "$mpiexec" "$out/sys/bin/mpiexec.hydra"
cp "$(dirname "$mpiexec")/hydra_pmi_proxy" "$out/sys/bin/"
ln -sf mpiexec.hydra "$out/sys/bin/mpiexec.mpich"
cp -L /usr/lib/x86_64-linux-gnu/ucx/libuct_cma.so.0 "$out/sys/lib/ucx/"

# Every library these load, but glibc's own (the other machine's must serve).
glibc='/(libc|libm|libdl|librt|libpthread|libresolv|ld-linux-x86-64|libutil)\.so'
{
  find "$out/build" "$out/sys/bin" "$out/sys/lib/ucx" -type f -perm -u+x
  find "$out/build/lib" "$out/sys/lib/ucx" -name '*.so*' -type f
} | sort -u | while read -r f; do ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'; done |
  sort -u | grep -Ev "$glibc" | while read -r lib; do cp -L "$lib" "$out/sys/lib/"; done
# No debug sections in the libraries (the lent machine's transfer is limited; libmpich.so.12 is
# still 41 MB of code: pack the folder, `tar -czf`, to carry it, about a third of the size).
for f in "$out"/sys/lib/*.so* "$out"/sys/lib/ucx/*.so*; do strip --strip-debug "$f" 2>/dev/null || true; done
# The model fuzzer and its corpus, when tests/fuzz/long_fuzz.sh has built them (for
# tests/fuzz/parallel_fuzz.sh on every core there): fuzz/fuzz_model, fuzz/corpus.tar.gz.
if [[ -x $build/fuzz-long/fuzz_model ]]; then
  mkdir -p "$out/fuzz"
  copy_stripped "$build/fuzz-long/fuzz_model" "$out/fuzz"
  [[ -d $build/fuzz-long/corpus-fuzz_model ]] && tar -C "$build/fuzz-long" -czf "$out/fuzz/corpus.tar.gz" corpus-fuzz_model
fi

cat >"$out/env.sh" <<'EOF'
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$here/build/bin:$here/sys/bin:$PATH"
export LD_LIBRARY_PATH="$here/sys/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export UCX_MODULE_DIR="$here/sys/lib/ucx"
EOF
du -sh "$out" | awk '{print "bundle.sh: " $1 " in " $2}'
