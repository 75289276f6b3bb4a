# gdb helpers for profkern, loaded by `cargo xtask gdb` (see docs/gdb.md).
set confirm off
set disassembly-flavor intel
set print pretty on

# The bootloader copies the kernel into memory after gdb has attached, over
# any software breakpoint gdb wrote there: use hardware breakpoints (hbreak,
# at most four) until the kernel runs.

define tick
  hbreak kernel::clock::on_timer_interrupt
  continue
end
document tick
Run until the next clock tick enters the kernel (kernel::clock::on_timer_interrupt).
end

# `sample` stops in Profile::on_tick on the statement that counts the
# sample (`self.samples += 1;`), where the bin has been found: `bin` and
# `region` are in scope there, and the charged pc one frame up (this build
# keeps no copy of on_tick's own `pc` argument that late). The line is found
# in the source, so an edit above it moves the breakpoint with it; if the
# statement is renamed, `sample` says so.
define sample
  python
src = "kernel/src/profil.rs"
marker = "self.samples += 1;"
line = next((n for n, text in enumerate(open(src), 1) if marker in text), None)
if line is None:
    raise gdb.GdbError(f"sample: no '{marker}' in {src}; update xtask/gdb/profkern.gdb")
gdb.execute(f"hbreak {src}:{line}")
  end
  continue
end
document sample
Run until a clock tick is charged to a process that has profil(2) on, and
stop in Profile::on_tick where its bin is known (run `profdemo` in the guest).
end

# `cow` stops at Space::break_cow's first instruction (its entry address,
# which no inlined code shares: a breakpoint on its first line stopped in
# an inlined VirtAddr::new in some builds) only when a user-mode write
# fault called it (exec also calls it, to fill the pages it loads). The breakpoint's
# stop() asks the caller's name: gdb's $_caller_is would need malloc in the
# inferior.
python
class CowFromUserFault(gdb.Breakpoint):
    def stop(self):
        # The caller, or the one above it when the compiler inlined a
        # frame in between (which it does in some builds and not others).
        frame = gdb.newest_frame().older()
        for _ in range(3):
            if frame is None:
                return False
            if (frame.name() or "").endswith("proc::fault::user_fault"):
                return True
            frame = frame.older()
        return False
end

define cow
  python CowFromUserFault("*kernel::mm::paging::Space::break_cow", type=gdb.BP_HARDWARE_BREAKPOINT)
  continue
end
document cow
Run until a user-mode write to a copy-on-write page (after fork) reaches
kernel::mm::paging::Space::break_cow.
end

define user
  add-symbol-file target/x86_64-unknown-none/debug/$arg0
end
document user
Load the symbols of user program NAME: `user init`, `user sh`, `user profdemo`.
(Profiled programs are in target/profiled/..., C programs in target/c/.)
end
