#!/bin/bash
# loopback aes128-gcm, stock vs series, built against this root's OpenSSL
set -u
B=${B:-/b}; cd $B; K=$B/k; mkdir -p $K /var/empty $B/out; chmod 700 $K
id sshd >/dev/null 2>&1 || useradd -r -d /var/empty -s /usr/sbin/nologin sshd
[ -f $K/id ] || { $B/series/ssh-keygen -q -t ed25519 -N '' -f $K/id; $B/series/ssh-keygen -q -t ed25519 -N '' -f $K/host; cp $K/id.pub $K/ak; printf '* %s\n' "$(cat $K/host.pub)" > $K/kh; }
[ -f $B/1g ] || head -c 1G /dev/urandom > $B/1g
declare -A PORT=([stock]=22312 [series]=22311) PID
for t in stock series; do
cat > $K/sshd_config.$t <<CFG
Port ${PORT[$t]}
ListenAddress 127.0.0.1
HostKey $K/host
AuthorizedKeysFile $K/ak
StrictModes no
PidFile none
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
SshdSessionPath $B/$t/sshd-session
SshdAuthPath $B/$t/sshd-auth
Subsystem sftp $B/$t/sftp-server
Ciphers aes128-gcm@openssh.com
CFG
$B/$t/sshd -D -e -f $K/sshd_config.$t > $B/out/sshd.$t.log 2>&1 & PID[$t]=$!
done
sleep 1
case ${PLACE:-free} in
split) SRVCPU=1 CLI="taskset -c 0" ;;
same) SRVCPU=0 CLI="taskset -c 0" ;;
*) SRVCPU=0,1 CLI= ;;
esac
for t in stock series; do taskset -pc $SRVCPU ${PID[$t]} >/dev/null; done
cli() { local t=$1; shift; "$@" -F /dev/null -o IdentityFile=$K/id -o UserKnownHostsFile=$K/kh -o GlobalKnownHostsFile=/dev/null -o BatchMode=yes -o Ciphers=aes128-gcm@openssh.com; }
one() {	# tree tool -> "MB/s client_cpu server_cpu"
	local t=$1 tool=$2 p=${PORT[$1]} s0 s1 w0 w1 c
	s0=$(awk '{print $16+$17}' /proc/${PID[$t]}/stat)
	TIMEFORMAT='%R %U %S'
	{ time (
	case $tool in
	ssh-up) $CLI $B/$t/ssh -p $p -F /dev/null -i $K/id -o UserKnownHostsFile=$K/kh -o BatchMode=yes -c aes128-gcm@openssh.com 127.0.0.1 'cat > /dev/null' < $B/1g 2>>$B/out/err.log ;;
	ssh-down) $CLI $B/$t/ssh -p $p -F /dev/null -i $K/id -o UserKnownHostsFile=$K/kh -o BatchMode=yes -c aes128-gcm@openssh.com 127.0.0.1 "cat $B/1g" > /dev/null 2>>$B/out/err.log ;;
	scp-up) $CLI $B/$t/scp -q -S $B/$t/ssh -P $p -F /dev/null -i $K/id -o UserKnownHostsFile=$K/kh -o BatchMode=yes -c aes128-gcm@openssh.com $B/1g 127.0.0.1:/dev/null 2>>$B/out/err.log ;;
	scp-down) $CLI $B/$t/scp -q -S $B/$t/ssh -P $p -F /dev/null -i $K/id -o UserKnownHostsFile=$K/kh -o BatchMode=yes -c aes128-gcm@openssh.com 127.0.0.1:$B/1g /dev/null 2>>$B/out/err.log ;;
	esac ) ; } 2> $B/out/t
	c=$(cat $B/out/t)
	sleep 0.3
	s1=$(awk '{print $16+$17}' /proc/${PID[$t]}/stat)
	set -- $c
	awk -v r=$1 -v u=$2 -v s=$3 -v sv=$((s1-s0)) 'BEGIN{printf "%.0f %.2f %.2f\n", 1073.741824/r, (u+s)/1.073741824, sv/100/1.073741824}'
}
for i in $(seq 1 ${ROUNDS:-7}); do
	for tool in ${TOOLS:-ssh-up ssh-down scp-up scp-down}; do
		for t in stock series; do echo "$i $tool $t $(one $t $tool)"; done
	done
done | tee $B/out/results.txt
kill ${PID[stock]} ${PID[series]}
