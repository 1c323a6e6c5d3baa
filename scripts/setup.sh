#!/usr/bin/env bash
# Installs fusebench's build and test dependencies with apt, and does nothing where they are
# already present. Supported: Debian 12 (bookworm; Catch2 v3 comes from bookworm-backports) and
# Ubuntu 24.04. The CUDA toolkit (13.x) is expected to be installed already: it is not in these
# distributions' archives.
set -euo pipefail

need=()
# Each dependency is checked by a file its package installs, so a machine that has them from
# another source (the GPU image) is left alone.
probe() {  # probe <package> <glob...>
  local pkg=$1; shift
  for g in "$@"; do
    # shellcheck disable=SC2086
    if compgen -G "$g" >/dev/null; then return 0; fi
  done
  need+=("$pkg")
}
probe libeigen3-dev       /usr/include/eigen3/Eigen/Core /usr/local/include/eigen3/Eigen/Core '/usr/local/share/eigen3/cmake/Eigen3Config.cmake'
probe nlohmann-json3-dev  /usr/include/nlohmann/json.hpp /usr/local/include/nlohmann/json.hpp
probe libbenchmark-dev    '/usr/lib/*/cmake/benchmark/benchmarkConfig.cmake' '/usr/local/lib*/cmake/benchmark/benchmarkConfig.cmake' \
                          '/usr/local/lib/*/cmake/benchmark/benchmarkConfig.cmake'
probe catch2              '/usr/lib/*/cmake/Catch2/Catch2Config.cmake' '/usr/local/lib*/cmake/Catch2/Catch2Config.cmake' \
                          '/usr/lib/cmake/Catch2/Catch2Config.cmake' '/usr/local/lib/*/cmake/Catch2/Catch2Config.cmake' \
                          '/usr/local/share/Catch2/cmake/Catch2Config.cmake'
probe zlib1g-dev        /usr/include/zlib.h /usr/local/include/zlib.h
command -v cmake >/dev/null || need+=(cmake)
command -v g++ >/dev/null || need+=(g++)
if [ "${FUSEBENCH_WITH_PLOTS:-0}" = 1 ]; then
  python3 -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
fi

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

if ! command -v apt-get >/dev/null; then
  echo "setup.sh: ${need[*]} not found where Debian/Ubuntu put them and no apt-get here; CMake will say what is really missing" >&2
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

. /etc/os-release
backports=()
if [ "${ID:-}" = debian ] && [ "${VERSION_CODENAME:-}" = bookworm ]; then
  # Catch2 v3 is only in bookworm-backports. Derive its entry from the machine's own Debian
  # sources (same URIs and keyring), so no mirror is named here.
  bp=/etc/apt/sources.list.d/fusebench-bookworm-backports.sources
  if [ ! -e "$bp" ] && ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    src=""
    if [ -e /etc/apt/sources.list.d/debian.sources ]; then
      src=$(awk 'BEGIN{RS="";ORS="\n\n"} /Suites:[^\n]*bookworm([ \n]|$)/ && !/security/ {print; exit}' \
            /etc/apt/sources.list.d/debian.sources)
      uris=$(printf '%s\n' "$src" | sed -n 's/^URIs:[[:space:]]*//p' | head -1)
      keyring=$(printf '%s\n' "$src" | sed -n 's/^Signed-By:[[:space:]]*//p' | head -1)
    elif [ -e /etc/apt/sources.list ]; then
      uris=$(awk '$1=="deb" && $3=="bookworm" {print $2; exit}' /etc/apt/sources.list)
      keyring=""
    fi
    if [ -z "${uris:-}" ]; then
      echo "setup.sh: cannot find the bookworm entry in the machine's apt sources to derive bookworm-backports from" >&2
      exit 2
    fi
    {
      echo "Types: deb"
      echo "URIs: $uris"
      echo "Suites: bookworm-backports"
      echo "Components: main"
      [ -n "${keyring:-}" ] && echo "Signed-By: $keyring"
    } | $SUDO tee "$bp" >/dev/null
  fi
  for p in "${need[@]}"; do [ "$p" = catch2 ] && backports=(-t bookworm-backports); done
fi

echo "setup.sh: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get update -qq; then
  # No network (a closed GPU machine with its own installs): the probes above may simply not know
  # where this machine keeps a package; CMake's find_package gives the final word.
  echo "setup.sh: apt-get update failed; not installing ${need[*]}; CMake will say what is really missing" >&2
  exit 0
fi
if [ ${#backports[@]} -gt 0 ]; then
  # Only catch2 is taken from backports; the rest stays on bookworm.
  rest=()
  for p in "${need[@]}"; do [ "$p" = catch2 ] || rest+=("$p"); done
  [ ${#rest[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${rest[@]}"
  $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports catch2
else
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
