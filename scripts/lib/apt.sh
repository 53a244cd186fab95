# shellcheck shell=bash
# The one place the scripts install Debian packages. Source it (`. scripts/lib/apt.sh`), then:
#
#   ensure_packages [--no-install-recommends] PACKAGE...
#       installs those of PACKAGE... that dpkg does not list as installed; does nothing when all are.
#   install_packages [--no-install-recommends] PACKAGE...
#       installs PACKAGE... (for a caller that decided what is missing itself, e.g. by command).
#   missing_packages PACKAGE...
#       prints those of PACKAGE... that dpkg does not list as installed, one a line.
#
# Installing runs `apt-get update` then `apt-get install -y` quietly, through sudo when not root, and
# says on stderr what it installs, prefixed with the calling script's name. A PACKAGE qualified with a
# foreign architecture (libc6:arm64) adds that architecture to dpkg first. Nothing is written to
# stdout (some callers' output is eval'd). The return status is apt-get's: with `set -e` a failure
# ends the caller; a caller that can do without the packages tests the status instead.

missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || printf '%s\n' "$p"
  done
}

install_packages() {
  local options=() sudo_cmd="" arch p
  if [ "${1:-}" = --no-install-recommends ]; then options+=("$1"); shift; fi
  (($#)) || return 0
  echo "$(basename "$0" .sh): installing $*" >&2
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  for p in "$@"; do
    case "$p" in
      *:*)
        arch=${p##*:}
        if [ "$arch" != "$(dpkg --print-architecture)" ] && ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
          $sudo_cmd dpkg --add-architecture "$arch" || return
        fi ;;
    esac
  done
  $sudo_cmd apt-get update -qq >&2 || return
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${options[@]}" "$@" >/dev/null
}

ensure_packages() {
  local options=() missing
  if [ "${1:-}" = --no-install-recommends ]; then options+=("$1"); shift; fi
  mapfile -t missing < <(missing_packages "$@")
  ((${#missing[@]})) || return 0
  install_packages "${options[@]}" "${missing[@]}"
}
