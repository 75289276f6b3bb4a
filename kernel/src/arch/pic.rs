//! The legacy 8259 PIC pair, remapped to vectors 32..48.
//!
//! With the PIT as tick source it delivers IRQ 0; in all cases it delivers the
//! serial port's IRQ 4. Every other line stays masked, so an unexpected device
//! cannot interrupt us.

use pic8259::ChainedPics;

use super::trap::PIC_BASE;
use crate::sync::{IrqLock, Rank};

static PICS: IrqLock<ChainedPics> =
    // SAFETY: PIC_BASE..PIC_BASE+16 are vectors reserved for the PIC in trap.rs.
    IrqLock::new(Rank::Pic, unsafe {
        ChainedPics::new(PIC_BASE as u8, PIC_BASE as u8 + 8)
    });

/// Bit `n` set masks IRQ `n`.
static MASK: IrqLock<u16> = IrqLock::new(Rank::Pic, !(1 << 2)); // IRQ 2 chains the slave

/// Remaps the PICs and masks every line.
pub fn init() {
    let mut pics = PICS.lock();
    // SAFETY: runs once at boot with interrupts off.
    unsafe {
        pics.initialize();
        let mask = *MASK.lock();
        pics.write_masks(mask as u8, (mask >> 8) as u8);
    }
}

/// Lets IRQ `irq` through (`enable == true`) or masks it.
pub fn set_irq_enabled(irq: u8, enable: bool) {
    let mut mask = MASK.lock();
    if enable {
        *mask &= !(1 << irq);
    } else {
        *mask |= 1 << irq;
    }
    // SAFETY: writing the interrupt mask registers has no other effect.
    unsafe { PICS.lock().write_masks(*mask as u8, (*mask >> 8) as u8) };
}

/// Acknowledges the interrupt at `vector`.
pub fn end_of_interrupt(vector: u64) {
    // SAFETY: `vector` is a PIC vector being handled right now.
    unsafe { PICS.lock().notify_end_of_interrupt(vector as u8) };
}

/// IRQ 7 and 15 can fire spuriously; a spurious IRQ 15 still needs the master
/// acknowledged (it saw a real IRQ 2). We never unmask 7 or 15, so every one
/// we see is spurious.
pub fn spurious(vector: u64) {
    if vector == PIC_BASE + 15 {
        end_of_interrupt(PIC_BASE);
    }
}
