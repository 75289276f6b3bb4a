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

define sample
  hbreak kernel::profil::Profile::on_tick
  continue
  # The stop is inside small helpers inlined into on_tick: climb to it.
  python
frame = gdb.selected_frame()
while frame is not None and frame.name() != "kernel::profil::Profile::on_tick":
    frame = frame.older()
if frame is not None:
    frame.select()
  end
  frame
end
document sample
Run until a clock tick is charged to a process that has profil(2) on
(kernel::profil::Profile::on_tick): start `profdemo` in the guest first.
end

define user
  add-symbol-file target/x86_64-unknown-none/debug/$arg0
end
document user
Load the symbols of user program NAME: `user init`, `user sh`, `user profdemo`.
(Profiled programs are in target/profiled/..., C programs in target/c/.)
end
