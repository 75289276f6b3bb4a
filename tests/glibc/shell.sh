# A shell script for Debian's glibc-static shells (busybox-static's sh and
# bash-static): `cargo xtask test` runs it with each shell here and on the
# host's Linux, and the two outputs must be equal. $1 is how to start the
# same shell again (it differs between the two machines, so it is never
# printed). Only builtins and the shell itself are used: the two machines
# have different /bin programs. Files go in the current directory.
SH=$1

echo "start"

# Pipelines, each stage a process.
echo "one two three" | { read a b c; echo "read: $c $b $a"; }
{ echo a; echo b; echo c; } | { while read l; do echo "<$l>"; done; } | { read first; read second; echo "first $first second $second"; }
! false | true
echo "negated pipeline: $?"

# Command substitution, nested.
x=$(echo sub; echo stitution)
echo "subst: $x"
echo "nested: $(echo $(echo $(echo deep)))"
echo "backquotes: `echo old style`"

# Subshells do not change their parent.
v=outer
( v=inner; echo "in subshell: $v"; exit 4 )
echo "subshell status $? and v=$v"
( ( ( exit 6 ) ) )
echo "three levels deep: $?"

# Functions, recursion (each level a command substitution: a fork).
fact() { if [ "$1" -le 1 ]; then echo 1; else echo $(( $1 * $(fact $(( $1 - 1 ))) )); fi; }
echo "fact 10 = $(fact 10)"
fib() { if [ "$1" -lt 2 ]; then echo "$1"; else echo $(( $(fib $(( $1 - 1 ))) + $(fib $(( $1 - 2 ))) )); fi; }
echo "fib 12 = $(fib 12)"

# Loops and arithmetic.
i=0; sum=0
while [ $i -lt 100 ]; do sum=$((sum + i * i)); i=$((i + 1)); done
echo "sum of squares below 100: $sum"
for w in alpha beta gamma; do printf '%s=%d ' "$w" "${#w}"; done; echo
case "profkern" in prof*) echo "case: matched prof*";; *) echo "case: no match";; esac

# Here-documents and redirections.
while read a b; do echo "heredoc: $b $a"; done <<END
1 one
2 two
END
echo "to a file" > out.txt
echo "appended" >> out.txt
n=0; while read line; do n=$((n + 1)); echo "file line $n: $line"; done < out.txt
read nothing < /dev/null
echo "read from /dev/null: $?"
echo "discarded" > /dev/null
echo "to stderr" 2>&1 >&2 2>/dev/null
exec 3> fd3.txt; echo "through fd 3" >&3; exec 3>&-
read l < fd3.txt; echo "fd 3 wrote: $l"

# Traps.
trap 'echo "trap: USR1"' USR1
kill -USR1 $$
trap - USR1
( trap 'echo "trap: subshell EXIT"' EXIT; echo "in a trapped subshell" )
$SH -c 'trap "echo trap: TERM in a child shell; exit 5" TERM; kill -TERM $$; echo not reached'
echo "child shell ended with $?"
$SH -c 'kill -TERM $$; echo not reached'
echo "child shell killed by TERM: $?"
$SH -c 'kill -KILL $$'
echo "child shell killed by KILL: $?"

# Background jobs and wait.
( exit 7 ) &
p7=$!
( exit 9 ) &
p9=$!
wait $p9; s9=$?
wait $p7; s7=$?
echo "waited: $s7 $s9"
for n in 1 2 3 4 5 6 7 8; do ( echo "job $n" > job$n.txt ) & done
wait
for n in 1 2 3 4 5 6 7 8; do read l < job$n.txt; printf '%s; ' "$l"; done; echo
( trap 'echo "background job: TERM"; exit 3' TERM; : > ready; while :; do :; done ) &
victim=$!
while [ ! -e ready ]; do :; done
kill -TERM $victim
wait $victim
echo "killed background job: $?"

# exec replaces the shell (in a subshell, so this script goes on).
( exec $SH -c 'echo "exec: a new shell"; exit 11' )
echo "exec'd shell: $?"

# The shell's own exit status.
$SH -c 'exit 42'
echo "exit 42: $?"
umask 027; umask

# Resource limits: ulimit sets them for the shell and what it runs.
( ulimit -n 50; echo "ulimit -n: $(ulimit -n)"; ulimit -Sn 30; ulimit -Hn 40; echo "ulimit -Sn, -Hn: $(ulimit -Sn) $(ulimit -Hn)" )
( ulimit -s 1024; echo "stack in a child: $($SH -c 'ulimit -s')" )
( ulimit -n 4; exec 5>/dev/null ) 2>/dev/null; echo "exec 5> under ulimit -n 4 fails: $?"

echo "end"
