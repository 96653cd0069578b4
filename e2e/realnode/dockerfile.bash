# e2e/realnode/dockerfile.bash, sourced by e2e/realnode/build: the image a Dockerfile
# describes, built without docker, buildkit or a registry (`e2e/realnode/build controller`
# builds the repository's Dockerfile with it). It reads the Dockerfile itself, so the image
# the e2e tests run is made from the same instructions as `docker build`'s: the same
# packages, the same cmake line, the same files copied, the same user and entrypoint.
#
# What it knows, and how it stands in for docker:
#   FROM debian:<suite>[-slim] [AS name]
#                 debootstrap --variant=minbase, with the apt sources and settings of Docker's
#                 Debian images (debuerreotype's); -slim drops the documentation, manual
#                 pages and translations as debuerreotype's slimify does
#   RUN           the text, run by /bin/sh -c in a chroot of the stage, as root, with
#                 /proc and this machine's resolv.conf mounted, at nice; stdin is /dev/null
#   WORKDIR       made, and the directory of the RUNs and COPYs after it
#   COPY [--from=stage] SRC... DEST
#                 files of the context (less .dockerignore's) or of an earlier stage,
#                 owned by root, with their modes; no wildcards
#   USER, ENTRYPOINT (exec form)
#                 the image's config
# Anything else (ENV, ARG, CMD, a shell-form ENTRYPOINT, RUN as another user, ...) stops the
# build and names its line, so a Dockerfile this would build differently fails the e2e test
# that runs the image rather than testing something else.
#
# Caching is docker's idea: each step keyed by the instructions' text, the functions here
# that run them (declare -f) and what they read, under ${CADRE_CACHE}/realnode/:
#   debian/<key>       debootstrap of a suite, shared by the stages (about a minute)
#   stage-root/<key>   FROM and the RUNs and WORKDIRs before the first COPY: a whole root
#                      file system, keyed also by the Debian versions of the packages their
#                      `apt-get install` names (seconds to a minute; rarely rebuilt)
#   stage/<key>        the rest of a stage that a later stage copies from, run in an overlay
#                      over its root, keeping only the paths copied from it; keyed also by
#                      the content of every file COPY takes from the context
#   <name>/<key>       the final stage: its root as one layer (stage-layer/<key>, cached) and
#                      what the rest of the stage wrote (the overlay's upper directory) as a
#                      second, with the config: an image directory as e2e/realnode/build makes
#                      them (REF, PARTS, manifest.json, config.json and the layers)
# so an edit to the sources recompiles in an overlay over the cached build root, and the
# image differs from the last only in its top layer. docs/e2e.md ("The controller image")
# lists where this differs from docker build.
# shellcheck shell=bash disable=SC2154

df_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# df_die LINE MESSAGE
df_die() {
	die "$df_file:$1: $2"
}

# df_parse FILE: the instructions of FILE in df_ins (upper case), df_arg (the rest, with
# continuation lines joined as Docker joins them: the backslash and newline dropped) and
# df_line (where each starts). Comment lines are dropped, inside an instruction too.
df_parse() {
	local raw n=0 start=0 acc="" cont=0
	df_file=$1
	df_ins=() df_arg=() df_line=()
	while IFS= read -r raw || [[ -n $raw ]]; do
		n=$((n + 1))
		[[ $raw =~ ^[[:space:]]*# ]] && continue
		if ((!cont)); then
			[[ $raw =~ ^[[:space:]]*$ ]] && continue
			start=$n acc=""
		fi
		if [[ $raw =~ ^(.*)\\[[:space:]]*$ ]]; then
			acc+=${BASH_REMATCH[1]}
			cont=1
			continue
		fi
		acc+=$raw
		cont=0
		[[ $acc =~ ^[[:space:]]*([A-Za-z]+)[[:space:]]+(.*[^[:space:]])[[:space:]]*$ ]] ||
			df_die "$start" "cannot read this instruction: $acc"
		df_ins+=("${BASH_REMATCH[1]^^}")
		df_arg+=("${BASH_REMATCH[2]}")
		df_line+=("$start")
	done <"$df_file"
	((!cont)) || df_die "$start" "the file ends inside an instruction"
	((${#df_ins[@]})) || df_die 1 "no instructions"
}

# df_plan: checks every instruction and splits them into stages: df_stage_first and
# df_stage_last (instruction indexes, FROM included), df_stage_name, df_stage_suite,
# df_stage_slim and df_stage_prefix (the index of the first instruction after the stage's
# root: its leading RUNs and WORKDIRs). df_needs[s] lists the paths later stages copy from
# stage s, one a line.
df_plan() {
	local i s=-1 a words w
	df_stage_first=() df_stage_last=() df_stage_name=() df_stage_suite=() df_stage_slim=()
	df_stage_prefix=() df_needs=()
	local user=root
	for i in "${!df_ins[@]}"; do
		a=${df_arg[$i]}
		case ${df_ins[$i]} in
		FROM)
			[[ $a =~ ^debian:([a-z]+)(-slim)?([[:space:]]+[Aa][Ss][[:space:]]+([A-Za-z0-9_.-]+))?$ ]] ||
				df_die "${df_line[$i]}" "FROM $a: this builder makes debian:<suite> and debian:<suite>-slim only"
			s=$((s + 1))
			df_stage_first[s]=$i
			df_stage_suite[s]=${BASH_REMATCH[1]}
			df_stage_slim[s]=${BASH_REMATCH[2]:+1}
			df_stage_name[s]=${BASH_REMATCH[4]:-$s}
			df_stage_prefix[s]=$((i + 1))
			df_needs[s]=""
			user=root
			;;
		RUN | WORKDIR | COPY | USER | ENTRYPOINT)
			((s >= 0)) || df_die "${df_line[$i]}" "${df_ins[$i]} before FROM"
			;;
		*) df_die "${df_line[$i]}" "${df_ins[$i]}: this builder does not know it (e2e/realnode/dockerfile.bash)" ;;
		esac
		df_stage_last[s]=$i
		case ${df_ins[$i]} in
		RUN)
			[[ $a != \[* ]] || df_die "${df_line[$i]}" "RUN in exec form: this builder runs the shell form only"
			[[ $user == root || $user == 0 || $user == 0:0 ]] ||
				df_die "${df_line[$i]}" "RUN as $user: this builder runs RUN as root only"
			;;
		USER)
			[[ $a =~ ^[A-Za-z0-9_.-]+(:[A-Za-z0-9_.-]+)?$ ]] || df_die "${df_line[$i]}" "USER $a: one user[:group]"
			user=$a
			;;
		ENTRYPOINT)
			jq -e 'type == "array" and all(.[]; type == "string")' <<<"$a" >/dev/null 2>&1 ||
				df_die "${df_line[$i]}" "ENTRYPOINT $a: this builder takes the exec form (a JSON array) only"
			;;
		COPY)
			read -r -a words <<<"$a"
			((${#words[@]} >= 2)) || df_die "${df_line[$i]}" "COPY $a: a source and a destination"
			[[ ${words[0]} != \[* ]] || df_die "${df_line[$i]}" "COPY in JSON form: not known here"
			local from=""
			if [[ ${words[0]} == --from=* ]]; then
				from=${words[0]#--from=}
				words=("${words[@]:1}")
				((${#words[@]} >= 2)) || df_die "${df_line[$i]}" "COPY $a: a source and a destination"
			fi
			[[ ${words[0]} != --* ]] || df_die "${df_line[$i]}" "COPY ${words[0]}: only --from is known here"
			for w in "${words[@]:0:${#words[@]}-1}"; do
				[[ $w != *[\*\?\[]* ]] || df_die "${df_line[$i]}" "COPY $w: no wildcards here"
				if [[ -n $from ]]; then
					[[ $w == /* ]] || df_die "${df_line[$i]}" "COPY --from: $w is not an absolute path"
				else
					[[ $w != /* && /$w/ != */../* ]] || df_die "${df_line[$i]}" "COPY $w: outside the context"
					[[ -e $df_context/$w ]] || df_die "${df_line[$i]}" "COPY $w: not in the context"
				fi
			done
			if [[ -n $from ]]; then
				local t
				t=$(df_stage_index "$from") && ((t < s)) ||
					df_die "${df_line[$i]}" "COPY --from=$from: no such stage before this one"
				df_needs[t]+=$(printf '%s\n' "${words[@]:0:${#words[@]}-1}")$'\n'
			fi
			;;
		esac
		if [[ ${df_stage_prefix[s]} == "$i" && ${df_ins[$i]} =~ ^(RUN|WORKDIR)$ ]]; then
			df_stage_prefix[s]=$((i + 1))
		fi
	done
}

# df_stage_index NAME: the index of the stage named (AS) or numbered NAME.
df_stage_index() {
	local s
	for s in "${!df_stage_name[@]}"; do
		[[ ${df_stage_name[$s]} == "$1" ]] && { echo "$s"; return 0; }
	done
	return 1
}

# df_text FIRST LAST: the instructions FIRST..LAST (indexes) as written, one a line: what
# docker's cache keys each step by.
df_text() {
	local i
	for ((i = $1; i <= $2; i++)); do
		printf '%s %s\n' "${df_ins[$i]}" "${df_arg[$i]}"
	done
}

# df_packages FIRST LAST: the packages the RUNs among FIRST..LAST name to `apt-get install`.
df_packages() {
	local i
	for ((i = $1; i <= $2; i++)); do
		[[ ${df_ins[$i]} == RUN ]] || continue
		grep -oE 'apt-get[[:space:]]+install[^&;|]*' <<<"${df_arg[$i]}" |
			tr -s ' \t' '\n' | grep -vE '^(apt-get|install|-.*)$' || true
	done | sort -u
}

# df_versions PACKAGE...: PACKAGE=<the version apt would install> from this machine's lists,
# in one apt-cache call (the image comes from the same Debian release).
df_versions() {
	(($#)) || return 0
	apt-cache policy "$@" 2>/dev/null | awk '/^[^ ]/ { p = $1; sub(/:$/, "", p) } /Candidate:/ { print p "=" $2 }'
}

# ---------------------------------------------------------------------------------------
# The context

# df_ignored PATH: .dockerignore leaves PATH (relative to the context) out: a pattern
# matches it or one of its directories. Exceptions (!) are refused in df_context_files.
df_ignored() {
	local p
	for p in "${df_ignore[@]}"; do
		# shellcheck disable=SC2053 # a glob, as .dockerignore's patterns are
		[[ $1 == $p || $1 == $p/* ]] && return 0
	done
	return 1
}

# df_read_ignore: the context's .dockerignore patterns in df_ignore, relative to the context,
# without a leading or trailing slash (docker cleans them so).
df_read_ignore() {
	local l
	df_ignore=()
	[[ -f $df_context/.dockerignore ]] || return 0
	while IFS= read -r l || [[ -n $l ]]; do
		l=${l%%#*}
		l=$(sed 's/^[[:space:]]*//; s/[[:space:]]*$//' <<<"$l")
		[[ -n $l ]] || continue
		[[ $l != !* ]] || die "$df_context/.dockerignore: exceptions (!) are not known here"
		l=${l#/}
		l=${l%/}
		df_ignore+=("$l")
	done <"$df_context/.dockerignore"
}

# df_context_files SRC: SRC and everything under it that .dockerignore does not leave out,
# relative to the context, sorted, NUL-terminated.
df_context_files() {
	local f
	while IFS= read -r -d '' f; do
		f=${f#./}
		df_ignored "$f" || printf '%s\0' "$f"
	done < <(cd "$df_context" && find "./${1%/}" -print0 | LC_ALL=C sort -z)
}

# df_under DIR: of the NUL-terminated paths on stdin, those under DIR, relative to it.
df_under() {
	local f
	while IFS= read -r -d '' f; do
		[[ $f == "$1"/* ]] && printf '%s\0' "${f#"$1"/}"
	done
	return 0
}

# df_context_hash SRC...: a hash of the names, types, modes, link targets and contents of
# what COPY takes from the context.
df_context_hash() {
	local s f files=() links=()
	for s in "$@"; do
		printf 'src %s\n' "$s"
		files=() links=()
		while IFS= read -r -d '' f; do
			if [[ -L $df_context/$f ]]; then
				links+=("$f -> $(readlink "$df_context/$f")")
			elif [[ -f $df_context/$f ]]; then
				files+=("$f")
			fi
		done < <(df_context_files "$s")
		(cd "$df_context" && df_context_files "$s" | xargs -0 -r stat -c '%n %F %a')
		((${#links[@]} == 0)) || printf '%s\n' "${links[@]}"
		((${#files[@]} == 0)) || (cd "$df_context" && sha256sum -- "${files[@]}")
	done | sha256sum | cut -c1-16
}

# ---------------------------------------------------------------------------------------
# Building

# df_debian SUITE: a Debian SUITE in $dest/rootfs as Docker's debian:SUITE is made:
# debootstrap's minbase, the sources of SUITE, its updates and its security archive, and
# debuerreotype's settings for images (no services started, apt's download cache emptied
# after every install, no translations). No package lists: a Dockerfile's RUN fetches them.
df_debian() {
	local suite=$1 root=$dest/rootfs mirror security
	command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install -y debootstrap)"
	mirror=$(debian_mirror)
	mirror=${mirror%/}
	security=${CADRE_DEBIAN_SECURITY_MIRROR:-${mirror}-security}
	log "debootstrap $suite from $mirror ..."
	nice -n "$nice_level" debootstrap --variant=minbase "$suite" "$root" "$mirror" \
		>"$dest/debootstrap.log" 2>&1 || { tail -n 20 "$dest/debootstrap.log" >&2; die "debootstrap failed"; }
	rm -f "$root/etc/apt/sources.list"
	cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	printf '#!/bin/sh\n# An image build starts no services.\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 0755 "$root/usr/sbin/policy-rc.d"
	printf 'force-unsafe-io\n' >"$root/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
	cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
	printf 'Acquire::Languages "none";\n' >"$root/etc/apt/apt.conf.d/docker-no-languages"
	printf 'Apt::AutoRemove::SuggestsImportant "false";\n' >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
	rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin "$root"/var/lib/apt/lists/* \
		"$root"/var/log/*
	# The runtime mounts its own (containerd, docker).
	: >"$root/etc/resolv.conf"
	: >"$root/etc/hostname"
	chroot "$root" /usr/bin/env -i PATH="$df_path" dpkg-query -W -f='${Package}=${Version}\n' >"$dest/PACKAGES"
}

# df_slim ROOT: debian:<suite>-slim from debian:<suite>, as debuerreotype's slimify makes it:
# dpkg told to leave out documentation, manual pages and translations (copyright files and
# locale.alias stay), and those already installed removed.
df_slim() {
	local root=$1 d
	cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
path-include /usr/share/doc/*/copyright
path-include /usr/share/locale/all_languages
path-include /usr/share/locale/currency/*
path-include /usr/share/locale/l10n/*
path-include /usr/share/locale/languages
path-include /usr/share/locale/locale.alias
EOF
	find "$root/usr/share/doc" -mindepth 1 ! -type d ! -path "$root/usr/share/doc/*/copyright" -delete
	find "$root/usr/share/locale" -mindepth 1 ! -type d ! -path "$root/usr/share/locale/currency/*" \
		! -path "$root/usr/share/locale/l10n/*" ! -name all_languages ! -name languages \
		! -name locale.alias -delete
	for d in groff info linda lintian/overrides man; do
		[[ -d $root/usr/share/$d ]] && find "$root/usr/share/$d" -mindepth 1 ! -type d -delete
	done
	find "$root/usr/share/doc" "$root/usr/share/locale" "$root/usr/share/man" -mindepth 1 -type d -empty -delete 2>/dev/null || true
}

# df_mounts ROOT / df_umounts ROOT: what a RUN needs in its chroot: /proc, and DNS through
# this machine's resolv.conf (bound over the image's empty one, so none of it stays).
df_mounts() {
	mount -t proc proc "$1/proc"
	mount --bind /etc/resolv.conf "$1/etc/resolv.conf"
}
df_umounts() {
	umount "$1/etc/resolv.conf" 2>/dev/null || umount -l "$1/etc/resolv.conf" 2>/dev/null || true
	umount "$1/proc" 2>/dev/null || umount -l "$1/proc" 2>/dev/null || true
}

# df_run ROOT WORKDIR TEXT LOG: RUN TEXT, as docker runs it: /bin/sh -c TEXT in WORKDIR, as
# root, with the image's PATH; output to LOG, whose end is shown when it fails.
df_run() {
	local root=$1 wd=$2 text=$3 out=$4 rc=0
	log "RUN ${text:0:100}$( ((${#text} > 100)) && echo ...)"
	df_mounts "$root"
	nice -n "$nice_level" chroot "$root" /usr/bin/env -i PATH="$df_path" HOME=/root \
		/bin/sh -c 'cd "$0" && exec /bin/sh -c "$1"' "$wd" "$text" </dev/null >>"$out" 2>&1 || rc=$?
	df_umounts "$root"
	if ((rc != 0)); then
		tail -n 30 "$out" >&2
		die "RUN failed (exit $rc): $text"
	fi
}

# df_workdir CURRENT DIR: WORKDIR DIR after CURRENT.
df_workdir() {
	if [[ $2 == /* ]]; then echo "$2"; else echo "${1%/}/$2"; fi
}

# df_build_root STAGE BASE_DIR: the stage's root: BASE_DIR's Debian (slimmed for -slim),
# then its leading RUNs and WORKDIRs, in $dest/rootfs; its working directory in $dest/WORKDIR.
df_build_root() {
	local s=$1 base=$2 root=$dest/rootfs i wd=/
	cp -a "$base/rootfs" "$root"
	[[ -z ${df_stage_slim[$s]} ]] || df_slim "$root"
	for ((i = df_stage_first[s] + 1; i < df_stage_prefix[s]; i++)); do
		case ${df_ins[$i]} in
		RUN) df_run "$root" "$wd" "${df_arg[$i]}" "$dest/run.log" ;;
		WORKDIR)
			wd=$(df_workdir "$wd" "${df_arg[$i]}")
			mkdir -p "$root$wd"
			;;
		esac
	done
	echo "$wd" >"$dest/WORKDIR"
	chroot "$root" /usr/bin/env -i PATH="$df_path" dpkg-query -W -f='${Package}=${Version}\n' >"$dest/PACKAGES"
}

# df_layer ROOT_DIR: the stage root of ROOT_DIR as one layer: $dest/layer.tar and its
# DIFF_ID.
df_layer() {
	nice -n "$nice_level" tar --numeric-owner --sort=name --mtime=@0 --exclude='./dev/*' \
		--exclude='./proc/*' --exclude='./sys/*' -C "$1/rootfs" -cf "$dest/layer.tar" .
	sha256sum "$dest/layer.tar" | cut -d' ' -f1 >"$dest/DIFF_ID"
}

# df_copy ROOT WORKDIR FROM_DIR LINE WORDS...: COPY WORDS (sources, then the destination)
# into ROOT, from the context (FROM_DIR empty) or from FROM_DIR, a stage's saved paths.
df_copy() {
	local root=$1 wd=$2 from=$3 line=$4 dst src target dir_dst=0 n
	shift 4
	n=$#
	dst=${!n}
	[[ $dst == /* ]] || dst=$(df_workdir "$wd" "$dst")
	# Docker: a destination ending in / or taking several sources is a directory.
	[[ $dst == */ || $n -gt 2 ]] && dir_dst=1
	for src in "${@:1:n-1}"; do
		if [[ -n $from ]]; then
			[[ -e $from/out$src || -L $from/out$src ]] || df_die "$line" "COPY --from: $src is not in that stage"
			if [[ -d $from/out$src && ! -L $from/out$src ]]; then
				mkdir -p "$root$dst"
				cp -a "$from/out$src/." "$root$dst/"
			else
				target=$dst
				((dir_dst)) && target=${dst%/}/$(basename "$src")
				mkdir -p "$(dirname "$root$target")"
				cp -a "$from/out$src" "$root$target"
			fi
		elif [[ -d $df_context/$src && ! -L $df_context/$src ]]; then
			# Its contents, not the directory itself, as docker copies a directory.
			mkdir -p "$root$dst"
			df_context_files "$src" | df_under "${src%/}" |
				tar -C "$df_context/$src" --null --no-recursion -T - --numeric-owner --owner=0 --group=0 -cf - |
				tar -C "$root$dst" -xpf -
		else
			target=$dst
			((dir_dst)) && target=${dst%/}/$(basename "$src")
			mkdir -p "$(dirname "$root$target")"
			cp -P --preserve=mode,timestamps "$df_context/$src" "$root$target"
			chown -h 0:0 "$root$target"
		fi
	done
}

# df_build_tail OUT STAGE ROOT_DIR [FROM_DIR...]: the rest of the stage, in an overlay over
# ROOT_DIR's root (OUT/upper holds what it writes). FROM_DIR: the directory of each stage
# before, in order (- for those not built). A stage copied from keeps those paths in
# OUT/out; the stage's config goes to OUT/CONFIG (with Debian's image's CMD, bash, unless
# an ENTRYPOINT replaced it).
df_build_tail() {
	local out=$1 s=$2 root_dir=$3 merged=$1/merged i wd user="" entrypoint=null p words from
	local from_dirs=("${@:4}")
	mkdir -p "$out"/{upper,work,merged}
	mount -t overlay overlay -o "lowerdir=$root_dir/rootfs,upperdir=$out/upper,workdir=$out/work" "$merged"
	wd=$(<"$root_dir/WORKDIR")
	for ((i = df_stage_prefix[s]; i <= df_stage_last[s]; i++)); do
		case ${df_ins[$i]} in
		RUN) df_run "$merged" "$wd" "${df_arg[$i]}" "$out/run.log" ;;
		WORKDIR)
			wd=$(df_workdir "$wd" "${df_arg[$i]}")
			mkdir -p "$merged$wd"
			;;
		COPY)
			read -r -a words <<<"${df_arg[$i]}"
			from=""
			if [[ ${words[0]} == --from=* ]]; then
				from=${from_dirs[$(df_stage_index "${words[0]#--from=}")]}
				words=("${words[@]:1}")
			fi
			df_copy "$merged" "$wd" "$from" "${df_line[$i]}" "${words[@]}"
			;;
		USER) user=${df_arg[$i]} ;;
		ENTRYPOINT) entrypoint=$(jq -c . <<<"${df_arg[$i]}") ;;
		esac
	done
	while IFS= read -r p; do
		[[ -n $p ]] || continue
		[[ -e $merged$p || -L $merged$p ]] || die "stage ${df_stage_name[$s]} has no $p, which a later COPY takes"
		mkdir -p "$(dirname "$out/out$p")"
		cp -a "$merged$p" "$out/out$p"
	done <<<"${df_needs[$s]}"
	umount "$merged"
	rm -rf "$out/work" "$out/merged"
	# A stage copied from keeps only what is copied (the last keeps what it wrote: its layer).
	[[ -z ${df_needs[$s]//$'\n'/} ]] || rm -rf "$out/upper"
	jq -nc --arg user "$user" --argjson ep "$entrypoint" --arg wd "$wd" --arg path "PATH=$df_path" \
		'{Env: [$path]} + (if $user != "" then {User: $user} else {} end)
		 + (if $ep != null then {Entrypoint: $ep} else {Cmd: ["bash"]} end)
		 + (if $wd != "/" then {WorkingDir: $wd} else {} end)' >"$out/CONFIG"
}

# df_whiteouts DIR: an overlay's deletions (0/0 character devices) as the layer format's
# .wh.<name> files. (A directory emptied and made again, an opaque one, is not written:
# nothing this builder runs does that.)
df_whiteouts() {
	local f
	while IFS= read -r -d '' f; do
		[[ $(stat -c '%t:%T' "$f") == 0:0 ]] || continue
		rm -f "$f"
		: >"$(dirname "$f")/.wh.$(basename "$f")"
	done < <(find "$1" -type c -print0)
}

# df_image REF LAYER_DIR TAIL_DIR: the final stage as an image directory: the root's layer
# (a hard link into LAYER_DIR) and what the rest of the stage wrote (TAIL_DIR/upper, which
# this changes).
df_image() {
	local ref=$1 layer=$2 tail=$3 arch
	ln "$layer/layer.tar" "$dest/base.tar" 2>/dev/null || cp "$layer/layer.tar" "$dest/base.tar"
	df_whiteouts "$tail/upper"
	tar --numeric-owner --sort=name --mtime=@0 -C "$tail/upper" -cf "$dest/app.tar" .
	arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
	jq -nc --arg arch "$arch" --argjson cfg "$(<"$tail/CONFIG")" \
		--arg base "sha256:$(<"$layer/DIFF_ID")" --arg app "sha256:$(sha256sum "$dest/app.tar" | cut -d' ' -f1)" \
		'{architecture: $arch, os: "linux", created: "1970-01-01T00:00:00Z", config: $cfg,
		  rootfs: {type: "layers", diff_ids: [$base, $app]}}' >"$dest/config.json"
	printf '[{"Config":"config.json","RepoTags":["%s"],"Layers":["base.tar","app.tar"]}]\n' "$ref" >"$dest/manifest.json"
	printf '%s\n' "$ref" >"$dest/REF"
	echo manifest.json config.json base.tar app.tar >"$dest/PARTS"
}

# df_prune KIND: entries of KIND unused for a week. Every edit of the sources makes a
# stage and an image (megabytes each, beside the layers they share).
df_prune() {
	[[ -d $cache_root/$1 ]] || return 0
	find "$cache_root/$1" -mindepth 1 -maxdepth 1 -type d -mtime +7 -exec rm -rf {} + 2>/dev/null || true
}

# df_build DOCKERFILE CONTEXT NAME: the image of DOCKERFILE's last stage, named
# localhost/NAME:<key>; prints its directory (cache kind NAME). Each step's key covers the
# functions that make it, so a change here rebuilds what it changes and no more.
df_build() {
	local s last dirs=() keys=() base_key root_key tail_key i words t base root layer
	df_context=$2
	df_parse "$1"
	df_read_ignore
	df_plan
	last=$((${#df_stage_first[@]} - 1))
	for ((s = 0; s <= last; s++)); do
		dirs[s]=- keys[s]=-
		# A stage nothing copies from, other than the last, is skipped, as BuildKit does.
		((s == last)) || [[ -n ${df_needs[$s]//$'\n'/} ]] || continue
		base_key=$(key "$(declare -f df_debian)" "${df_stage_suite[$s]}" \
			"$(df_versions base-files libc6 apt)")
		base=$(cached debian "$base_key" df_debian "${df_stage_suite[$s]}")
		# shellcheck disable=SC2046 # one package a word
		root_key=$(key "$(declare -f df_slim df_mounts df_umounts df_run df_workdir df_build_root)" \
			"$base_key" "slim=${df_stage_slim[$s]}" \
			"$(df_text "${df_stage_first[$s]}" "$((df_stage_prefix[s] - 1))")" \
			"$(df_versions $(df_packages "${df_stage_first[$s]}" "${df_stage_last[$s]}"))")
		root=$(cached stage-root "$root_key" df_build_root "$s" "$base")
		tail_key=$(key "$(declare -f df_mounts df_umounts df_run df_workdir df_copy df_build_tail df_stage \
			df_context_files df_under df_ignored df_read_ignore)" "$root_key" \
			"$(df_text "${df_stage_prefix[$s]}" "${df_stage_last[$s]}")" "${df_needs[$s]}")
		for ((i = df_stage_prefix[s]; i <= df_stage_last[s]; i++)); do
			[[ ${df_ins[$i]} == COPY ]] || continue
			read -r -a words <<<"${df_arg[$i]}"
			if [[ ${words[0]} == --from=* ]]; then
				t=$(df_stage_index "${words[0]#--from=}")
				tail_key=$(key "$tail_key" "${keys[$t]}")
			else
				tail_key=$(key "$tail_key" "$(df_context_hash "${words[@]:0:${#words[@]}-1}")")
			fi
		done
		keys[s]=$tail_key
		if ((s < last)); then
			dirs[s]=$(cached stage "$tail_key" df_stage "$s" "$root" "${dirs[@]:0:s}")
		else
			layer=$(cached stage-layer "$(key "$root_key" "$(declare -f df_layer)")" df_layer "$root")
			tail_key=$(key "$tail_key" "$(declare -f df_build_final df_whiteouts df_image)")
			dirs[s]=$(cached "$3" "$tail_key" df_build_final "$s" "$root" "$layer" \
				"localhost/$3:$tail_key" "${dirs[@]:0:s}")
		fi
		touch "${dirs[$s]}"
	done
	df_prune stage
	df_prune "$3"
	echo "${dirs[$last]}"
}

# df_stage STAGE ROOT_DIR [FROM_DIR...]: a stage that a later one copies from, in $dest.
df_stage() {
	df_build_tail "$dest" "$@"
}

# df_build_final STAGE ROOT_DIR LAYER_DIR REF [FROM_DIR...]: the last stage's rest, then its
# image, in $dest.
df_build_final() {
	local s=$1 root_dir=$2 layer=$3 ref=$4
	shift 4
	df_build_tail "$dest/tail" "$s" "$root_dir" "$@"
	df_image "$ref" "$layer" "$dest/tail"
	rm -rf "$dest/tail"
}
