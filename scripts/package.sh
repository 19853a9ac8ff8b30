#!/usr/bin/env bash
# Builds the Debian package: build-deb/vslint_VERSION_ARCH.deb (with its .changes and
# .buildinfo), from a copy of the committed-or-not files of this tree, so the build leaves no
# files outside build-deb/. The version is meson.build's: when debian/changelog's newest entry
# names another one, the copy gets an entry for it (commit that entry with the release).
# Needs dpkg-dev, debhelper and the build dependencies (scripts/install-deps.sh installs them).
# OUT=DIR puts the results elsewhere; LINTIAN=1 runs lintian on them.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${OUT:-$root/build-deb}
version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" meson.build | head -1)
[ -n "$version" ] || { echo "no version in meson.build" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src="$work/vslint-$version"
mkdir -p "$src" "$out"
# The files git knows (tracked, or new and not ignored): no build directories, no node_modules.
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
    [ -e "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -cf - | tar -xf - -C "$src"

if [ "$(cd "$src" && dpkg-parsechangelog -S Version)" != "$version" ]; then
    {
        printf 'vslint (%s) unstable; urgency=medium\n\n  * Release %s.\n\n' "$version" "$version"
        printf ' -- vslint developers <vslint@example.org>  %s\n\n' "$(date -R)"
        cat "$src/debian/changelog"
    } >"$src/debian/changelog.new"
    mv "$src/debian/changelog.new" "$src/debian/changelog"
fi

(cd "$src" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || {
    tail -40 "$out/build.log" >&2
    echo "dpkg-buildpackage failed; the whole log is $out/build.log" >&2
    exit 1
}
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
for f in "$work"/vslint_"$version"_"$arch".* "$work"/vslint-dbgsym_"$version"_"$arch".deb; do
    [ -e "$f" ] && mv "$f" "$out/"
done
deb="$out/vslint_${version}_${arch}.deb"
echo "$deb"
if [ "${LINTIAN:-0}" = 1 ]; then
    lintian --info --display-info --pedantic "$out/vslint_${version}_${arch}.changes"
fi
