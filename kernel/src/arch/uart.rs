//! The serial ports' registers, for the kernel's uses of them besides the
//! log (`log.rs` owns COM1's transmit side): COM1's receive side, which is
//! the console's keyboard, and COM2, over which files go home at power-off.

use uart_16550::SerialPort;
use x86_64::instructions::port::Port;

const COM1: u16 = 0x3f8;
const COM1_INTERRUPT_ENABLE: u16 = COM1 + 1;
const COM1_LINE_STATUS: u16 = COM1 + 5;
const COM2: u16 = 0x2f8;

/// Lets COM1 raise IRQ 4 when a byte arrives.
pub fn enable_com1_receive_interrupt() {
    // SAFETY: IER bit 0 enables the "data received" interrupt of COM1, which
    // log.rs has initialised; nothing else writes IER.
    unsafe { Port::<u8>::new(COM1_INTERRUPT_ENABLE).write(0x01) };
}

/// The next byte COM1 has received, if any.
pub fn com1_received_byte() -> Option<u8> {
    // SAFETY: reading the line status and data registers of COM1 only
    // consumes received bytes; the console's interrupt handler is the one
    // reader.
    unsafe {
        if Port::<u8>::new(COM1_LINE_STATUS).read() & 1 == 0 {
            return None;
        }
        Some(Port::<u8>::new(COM1).read())
    }
}

/// COM2, initialised: the port `fs::export` sends files home over.
pub fn com2() -> SerialPort {
    // SAFETY: 0x2f8 is COM2 on every PC and QEMU machine, and only the export
    // at power-off drives it.
    let mut port = unsafe { SerialPort::new(COM2) };
    port.init();
    port
}
