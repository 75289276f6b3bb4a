# busybox's ps, free, uptime and top read /proc: run here and on the
# host's Linux by busybox-static's sh, and the two outputs must be equal.
# Figures differ between machines, so what is printed is whether each
# program's output has its form and agrees with /proc and the shell's own
# pid ($$). $1 is the busybox binary (its path differs between machines).
B=$1

# ps: a header, and a row for this shell with its command line.
$B ps > ps.out
$B head -n 1 ps.out | $B awk '{print "ps header:", $1, $2, $3, $4}'
$B awk -v me=$$ '$1 == me {found = 1} END {print "ps lists this shell:", found ? "yes" : "no"}' ps.out
$B awk -v me=$$ '$1 == me {print "ps command:", $4, ($5 ~ /proc.sh$/) ? "and this script" : $5}' ps.out

# ps -o with fields that come from /proc/PID/stat. The shell's state is
# running or sleeping depending on whether it has reached its wait for ps
# when ps looks (Linux shows either, as does this kernel on several CPUs),
# so only that it is one of the two is compared.
$B ps -o pid,ppid,stat,comm > pso.out
$B awk -v me=$$ -v parent=$PPID '$1 == me {print "ps -o: this shell is", ($3 ~ /^[RS]/) ? "running or sleeping" : $3, $4 ", its parent", ($2 == parent) ? "matches $PPID" : $2 " not " parent}' pso.out

# free: the Mem line agrees with /proc/meminfo's MemTotal.
total=$($B awk '/^MemTotal:/ {print $2}' /proc/meminfo)
$B free > free.out
$B head -n 1 free.out | $B awk '{print "free header:", $1, $2, $3, $4}'
$B awk -v t=$total '$1 == "Mem:" {print "free total matches /proc/meminfo:", $2 == t ? "yes" : "no " $2 " " t; print "free used + free <= total:", $3 + $4 <= $2 ? "yes" : "no"}' free.out

# uptime: "up ... load average: a, b, c"
$B uptime | $B sed -n 's/.* up .*load average: [0-9.]*, [0-9.]*, [0-9.]*$/uptime: has its form/p'

# top, once, in batch mode: memory, CPU and load lines, then this shell.
$B top -b -n 1 > top.out
$B grep -c '^Mem: .* used, .* free' top.out | $B sed 's/^/top Mem lines: /'
$B grep -c '^CPU: .*usr .*sys .*idle' top.out | $B sed 's/^/top CPU lines: /'
$B grep -c '^Load average: ' top.out | $B sed 's/^/top load lines: /'
$B awk -v me=$$ '$1 == me {found = 1} END {print "top lists this shell:", found ? "yes" : "no"}' top.out
