#!/bin/bash
# The Debian root's tools on this kernel and on Debian's Linux
# (`cargo xtask test -- debian-script`, xtask/src/debscript.rs): bash,
# coreutils, grep, sed, find and ps, as a user's script runs them. Each
# line goes to the console as "script| LINE", each section starts with
# "== NAME", and both kernels must print the same lines, section by
# section. So nothing here prints what may rightly differ between two
# kernels: process ids, times, sizes of directories, the order of a
# directory's entries (each listing is sorted), the machine's memory.
# main runs in a subshell (its output goes through sed): $BASHPID, not
# $$, is the shell that runs it.

export LC_ALL=C TZ=UTC HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin
work=/tmp/script-work
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

shell() {
    echo "== shell"
    echo $((6 * 7)) $((2 ** 10)) $((17 % 5)) $((-7 / 2))
    words=(alpha beta gamma)
    echo "${#words[@]} ${words[1]} ${words[*]:1} ${words[0]^^} ${words[2]/mm/MM}"
    s="Hello, world"
    echo "${s#Hello, } ${s%, *} ${#s} ${s:7:3}"
    f() { local x=$1; echo "f got $x and returns $(($x + 1))"; return 3; }
    f 41
    echo "status $?"
    (exit 7)
    echo "a subshell's status $?"
    false | true
    echo "a pipeline's status $?"
    set -o pipefail
    false | true
    echo "with pipefail $?"
    set +o pipefail
    while read -r a b; do echo "read [$a] [$b]"; done <<'EOF'
one two three
four
EOF
    case foo.txt in *.txt) echo "case: a text file" ;; *) echo "case: other" ;; esac
    for i in {1..3}; do printf '%s,' "$i"; done
    echo
    printf '%05d|%-4s|%x|%.2f\n' 42 ab 255 3.14159
    [[ abc =~ ^a(b)c$ ]] && echo "regex ${BASH_REMATCH[1]}"
    echo "$(echo nested $(echo twice))"
}

files() {
    echo "== files"
    printf 'pear 3\napple 10\nfig 7\napple 10\n' > fruit
    sort fruit
    sort -u fruit | wc -l
    sort -k2 -n fruit | head -1
    uniq -c < <(sort fruit)
    wc -l -w -c fruit
    cut -d' ' -f1 fruit | tr a-z A-Z | paste -sd,
    head -n 2 fruit
    tail -n 1 fruit
    cat -n fruit | tail -n 1
    tac fruit | head -n 1
    nl -ba fruit | head -n 1
    od -c fruit | head -n 1
    md5sum fruit
    sha256sum fruit
    base64 fruit | head -n 1
    cp -p fruit copy && cmp fruit copy && echo "cp: the same bytes"
    mv copy moved && ls moved
    ln -s fruit link
    readlink link
    stat -L -c '%s %F' link
    stat -c '%F' link
    ln fruit hard
    stat -c '%h' fruit
    touch -d '2020-02-03 04:05:06' fruit
    stat -c '%y' fruit
    ls -l --time-style=long-iso fruit
    chmod 640 fruit && stat -c '%a %A' fruit
    chown nobody:nogroup fruit && stat -c '%U %G' fruit
    dd if=/dev/zero of=zeros bs=4096 count=3 status=none
    wc -c < zeros
    truncate -s 1M sparse && stat -c '%s' sparse
    printf 'abcdef' | dd bs=1 skip=2 count=3 status=none
    echo
    split -b 2 -d <(printf 'abcde') part && ls part* && cat part02
    echo
    seq 1 5 | paste -sd+
    seq -s' ' 10 -3 1
    expr 12 \* 3 + 1
    factor 360
    yes | head -n 3 | tr '\n' ' '
    echo
    date -u -d @86400 '+%Y-%m-%d %H:%M:%S %A'
    comm -12 <(printf 'a\nb\nc\n') <(printf 'b\nc\nd\n') | paste -sd' '
    join <(printf '1 one\n2 two\n') <(printf '1 uno\n2 dos\n')
    mktemp -d "$work/tmp.XXXXXX" | grep -c "^$work/tmp\."
    rm -r moved hard link zeros sparse part* "$work"/tmp.* && ls | sort | paste -sd' '
}

text() {
    echo "== grep and sed"
    printf 'one\ntwo\nthree\nfour\nfive\n' > lines
    grep -n e lines
    grep -c o lines
    grep -v -E '^(one|two)$' lines | paste -sd' '
    grep -o 'f[a-z]*' lines | paste -sd' '
    grep -q three lines && echo "grep -q: found"
    grep -q six lines || echo "grep -q: none, status $?"
    mkdir -p tree/sub && echo needle > tree/sub/a && echo hay > tree/b
    grep -r needle tree
    grep -rl -e needle -e hay tree | sort
    sed -n '2,3p' lines | paste -sd' '
    sed 's/o/0/g; y/ef/EF/' lines | paste -sd' '
    sed -n '$=' lines
    sed '1!G;h;$!d' lines | paste -sd' '
    cp lines edited && sed -i -e '/two/d' -e 's/^/> /' edited && cat edited | paste -sd'|'
    sed -E 's/(t)(w|h)/\2\1/' lines | head -n 3 | paste -sd' '
}

finding() {
    echo "== find"
    mkdir -p d/e/f d/g
    touch d/x.txt d/e/y.txt d/e/f/z.log d/g/w.txt
    find d | sort
    find d -type f -name '*.txt' | sort
    find d -mindepth 2 -type d | sort
    find d -name '*.log' -exec basename {} \;
    find d -type f -print0 | xargs -0 -n1 basename | sort | paste -sd' '
    touch -d '2001-01-01' d/old && find d -type f -newer d/old | wc -l
    find d -maxdepth 1 -type f | sort
    find d -empty -type d | sort
    find d -path '*/e/*' -type f | sort
}

procs() {
    echo "== processes"
    ps -o comm= -p $$
    sleep 30 &
    pid=$!
    [ "$(ps -o ppid= -p $pid | tr -d ' ')" = "$BASHPID" ] && echo "ps: the sleep's parent is this shell"
    [ "$(pgrep -x sleep)" = "$pid" ] && echo "pgrep: found the sleep"
    kill -STOP $pid
    sleep 0.2
    # The state letter alone: ps's stat column would add "+" here, for a
    # process in its terminal's foreground group. Every process has the
    # console as its controlling terminal on this kernel, none has one
    # on Linux under debinit (its /dev/console never becomes one): a
    # difference of the kernel's that this script leaves to its own test.
    ps -o state= -p $pid
    kill -CONT $pid
    kill $pid
    wait $pid
    echo "killed: $?"
    nice -n 5 nice
    timeout 0.5 sleep 5
    echo "timeout: $?"
    kill -l 15
    cat /proc/$$/comm
    readlink /proc/self/exe
    grep -c '^Pid:' /proc/self/status
    ls /proc/self/fd | sort -n | head -n 4 | paste -sd' '
    cat /proc/sys/kernel/ostype
    uname -s -m
    id -u; id -un; id -g
    env -i A=1 B=2 env | sort | paste -sd' '
    trap 'echo trapped USR1' USR1
    kill -USR1 $BASHPID
    trap - USR1
    (trap 'echo the subshell took TERM; exit 3' TERM; kill -TERM $BASHPID; sleep 1)
    echo "the subshell's status: $?"
    sleep 1 &
    jobs | wc -l
    wait
}

plumbing() {
    echo "== pipes and redirections"
    { echo out; echo err >&2; } 2>&1 >/dev/null
    exec 3>fd3
    echo "through fd 3" >&3
    exec 3>&-
    cat fd3
    mkfifo fifo
    (echo "through a FIFO" > fifo) &
    cat fifo
    wait
    cat <(echo "process substitution")
    echo "a here string" | { read -r line; echo "read: $line"; }
    printf 'x\ny\n' | tee teed | wc -l
    cat teed | paste -sd' '
    echo appended >> teed && tail -n 1 teed
    set -o noclobber
    (echo no > teed) 2>/dev/null || echo "noclobber kept the file"
    set +o noclobber
    head -c 100000 /dev/zero | wc -c
    head -c 8 /dev/urandom | wc -c
    echo "to null" > /dev/null && echo "/dev/null takes it"
}

main() {
    shell
    files
    text
    finding
    procs
    plumbing
    echo "== end"
}

main 2>&1 | sed -u 's/^/script| /'
cd /
rm -rf "$work"
