#!/bin/bash
# Builds Tern, installs it into ./install, compiles the examples with the
# installed mpicc and runs them with the installed mpiexec.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
prefix=$root/install
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

echo "=== build (build/) and install into $prefix"
cmake -S . -B build "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX="$prefix"
cmake --build build -j "$(nproc)"
cmake --install build --prefix "$prefix"

export PATH=$prefix/bin:$PATH
mkdir -p build/demo
cd build/demo

echo
echo "=== tern-info"
tern-info

echo
echo "=== mpicc -show: $(mpicc -show)"
mpicc -O2 -Wall -o hello "$root/examples/hello.c"
mpicc -O2 -Wall -o ping_pong "$root/examples/ping_pong.c"

echo
echo "=== mpiexec -n 4 ./hello"
timeout 120 mpiexec -n 4 ./hello

echo
echo "=== mpiexec -n 2 ./ping_pong"
timeout 300 mpiexec -n 2 ./ping_pong

echo
echo "Demo done. Tern is installed in $prefix; try:"
echo "  export PATH=$prefix/bin:\$PATH"
echo "  mpicc -o hello examples/hello.c && mpiexec -n 4 ./hello"
