//! The serial ports' registers, for the kernel's uses of them besides the
//! log (`log.rs` owns COM1's transmit side): COM1's receive side, which is
//! the console's keyboard, and COM2, over which files go home at power-off.

use uart_16550::SerialPort;
use x86_64::instructions::port::Port;

const COM1: u16 = 0x3f8;
const COM1_INTERRUPT_ENABLE: u16 = COM1 + 1;
const COM1_LINE_STATUS: u16 = COM1 + 5;
const COM2: u16 = 0x2f8;

/// Bytes COM1 held before the kernel set it up: keys typed while the
/// machine booted. Setting the UART up clears its receive FIFO, which
/// lost the first key of a line typed ahead ("sh: cho: No such file"), so
/// `keep_early_input` reads them out first and the console takes them
/// (`take_early_input`) when it starts listening.
static EARLY_INPUT: spin::Mutex<([u8; 16], usize)> = spin::Mutex::new(([0; 16], 0));

/// Keeps what COM1 has received so far; called before it is set up.
pub fn keep_early_input() {
    let mut early = EARLY_INPUT.lock();
    // A UART that is not there reads all ones: bounded by the buffer.
    while early.1 < early.0.len() {
        let Some(byte) = com1_received_byte() else {
            break;
        };
        let at = early.1;
        early.0[at] = byte;
        early.1 += 1;
    }
}

/// The bytes `keep_early_input` kept, once.
pub fn take_early_input() -> alloc::vec::Vec<u8> {
    let mut early = EARLY_INPUT.lock();
    let bytes = early.0[..early.1].to_vec();
    early.1 = 0;
    bytes
}

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
