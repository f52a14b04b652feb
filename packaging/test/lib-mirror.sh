# packaging/test/lib-mirror.sh — sourced by swap-test.
# lfn_debian_mirrors: print "MAIN_URI SECURITY_URI" for Debian, derived from
# this machine's apt configuration (deb822 *.sources first, then
# sources.list); SECURITY_URI may be empty.  No host is hard-coded.
lfn_debian_mirrors() {
	local main="" sec=""
	local f uris suites line
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		# one stanza per paragraph: print "URIS|SUITES"
		while IFS='|' read -r uris suites; do
			case " $suites " in
			*-security*) [ -n "$sec" ] || sec=${uris%% *} ;;
			*) [ -n "$main" ] || main=${uris%% *} ;;
			esac
		done < <(awk 'BEGIN{RS="";FS="\n"} {u="";s="";t="";
			for(i=1;i<=NF;i++){ if($i ~ /^URIs:/){sub(/^URIs:[ \t]*/,"",$i);u=$i}
			  if($i ~ /^Suites:/){sub(/^Suites:[ \t]*/,"",$i);s=$i}
			  if($i ~ /^Types:/){t=$i} }
			if(u!="" && t ~ /(^|[ \t])deb([ \t]|$)/) print u "|" s}' "$f")
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		while read -r line; do
			set -- $line
			[ "${1:-}" = deb ] || continue
			shift
			case "${1:-}" in \[*) while [ $# -gt 0 ] && [ "${1%]}" = "$1" ]; do shift; done; shift ;; esac
			case "${2:-}" in
			*-security*) [ -n "$sec" ] || sec=$1 ;;
			*) [ -n "$main" ] || main=$1 ;;
			esac
		done < <(grep -E '^[[:space:]]*deb[[:space:]]' "$f")
	done
	[ -n "$main" ] || return 1
	echo "$main $sec"
}
