# The shell's grammar, run by /bin/sh here and by the host's sh (dash on
# Debian) there: their standard output must be the same. Only programs
# both have are used (echo, cat, true, false, mkdir, rm, sleep), and only
# relations are printed where the two differ (pids).

echo "and-or:"
true && echo "  true && runs"
false && echo "  never"
false || echo "  false || runs"
true || echo "  never"
false && echo never || echo "  a && b || c: c after a failed"
! false && echo "  ! false is true"
[ -d / ] || { echo "  no root?"; exit 1; }

echo "status:"
false; echo "  after false: $?"
true; echo "  after true: $?"
sh -c 'exit 7'; echo "  after exit 7: $?"
! true; echo "  after ! true: $?"

echo "pids:"
[ $$ -gt 1 ] && echo "  \$\$ is a pid"
sleep 0 &
[ "$!" -gt "$$" ] && echo "  \$! is the job, started after the shell"
wait $!; echo "  wait \$!: $?"
sh -c 'exit 3' & wait $!; echo "  a job's status: $?"
( [ $$ -gt 1 ] && echo "  subshell sees \$\$" )

echo "groups and subshells:"
{ echo "  in a group"; echo "  still"; } | cat
x=outer; ( x=inner; echo "  subshell x=$x" ); echo "  after it x=$x"
y=outer; { y=group; }; echo "  after a group y=$y"
( exit 4 ); echo "  ( exit 4 ): $?"
{ echo "  to a file"; echo "  two lines"; } > grouped.txt; cat grouped.txt

echo "variables:"
name=world; echo "  hello $name, hello ${name}!"
empty=; echo "  [${empty}] [$unset_var]"
two="a   b"; for w in $two; do echo "  split: $w"; done
for w in "$two"; do echo "  quoted: $w"; done
echo '  single $name' "double $name" \$name
n=1; n2=$n$n; echo "  joined: $n2"

echo "test and [:"
[ abc = abc ] && echo "  ="
[ abc != abd ] && echo "  !="
[ -n x ] && [ -z "" ] && echo "  -n -z"
[ 3 -lt 10 ] && [ 10 -ge 10 ] && [ 2 -ne 3 ] && echo "  integers"
test -f grouped.txt && test ! -d grouped.txt && echo "  -f and !"
[ -e /nonexistent ]; echo "  -e missing: $?"
[ x ] && echo "  one word"
[ ] ; echo "  nothing: $?"

echo "if, while, for:"
if false; then echo never; elif true; then echo "  elif"; else echo never; fi
if [ -d / ]
then
    echo "  multi-line if"
fi
i=
while [ "$i" != ... ]; do i=.$i; echo "  while $i"; done
count=
until [ "$count" = xxx ]; do count=x$count; done; echo "  until: $count"
for f in one two three; do echo "  for $f"; done
for f in; do echo never; done; echo "  empty for: $?"
if false; then :; fi; echo "  if without a branch taken: $?"

echo "read:"
echo "one two three four" | { read a b rest; echo "  a=$a b=$b rest=$rest"; }
echo "   lead and trail   " | { read a; echo "  [$a]"; }
echo "x y" | { read a b c; echo "  more names than fields: [$a] [$b] [$c]"; }
echo 'a\ b c' > read.txt
{ read x y; echo "  backslash: [$x] [$y]"; } < read.txt
{ read -r x y; echo "  -r: [$x] [$y]"; } < read.txt
echo 'line one \' > read.txt; echo 'line two' >> read.txt
{ read x; echo "  joined: [$x]"; } < read.txt
echo -n 'no newline' > read.txt
{ read x; echo "  at the end of input: $? [$x]"; } < read.txt
echo "a:b::c" | { IFS=: read p q r s; echo "  IFS=: [$p] [$q] [$r] [$s]"; }
echo "a:b c" > read.txt; echo "d:e f" >> read.txt
{ IFS=: read p q; read r s; echo "  IFS only for that read: [$p] [$q], then [$r] [$s]"; } < read.txt
echo "first" > read.txt; echo "second" >> read.txt
{ read x; read y; echo "  line by line: [$x] then [$y]"; } < read.txt
read z < /dev/null; echo "  empty input: $?"
rm read.txt

echo "redirections:"
echo "  to stderr" >&2
echo "  err to out" 2>&1
cat < grouped.txt > copy.txt; cat grouped.txt >> copy.txt; cat copy.txt
cat nonexistent 2>/dev/null || echo "  a missing file, its error hidden"
rm grouped.txt copy.txt
echo done
