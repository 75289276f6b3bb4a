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
/// machine booted, which the console takes (`take_early_input`) when it
/// starts listening.
static EARLY_INPUT: spin::Mutex<([u8; 16], usize)> = spin::Mutex::new(([0; 16], 0));

/// Sets COM1 up (38400 baud, 8N1, its receive interrupt off until the
/// console lets it through) without losing what was typed while the
/// machine booted. uart_16550's `init` turns the FIFOs on and clears
/// them, which lost the first key of a line typed ahead ("sh: cho: No
/// such file"). Reading the bytes out first is not enough: turning the
/// FIFOs on clears them whatever the clear bits say, and the next byte
/// arrives in between (beside a busy host it did: "eho"). So the FIFOs
/// are left as the firmware left them: off after SeaBIOS, when QEMU hands
/// the UART one byte at a time and holds the rest, so nothing typed is
/// lost; on after OVMF, and then not cleared. (On hardware, FIFOs off
/// can overrun when a burst comes faster than the interrupt is served.)
pub fn init_com1() {
    keep_early_input();
    // IIR bits 7:6 read 11 when the FIFOs are on.
    // SAFETY: reading COM1's interrupt identification register has no
    // effect but acknowledging a transmit-empty interrupt, and nothing is
    // waiting for one yet.
    let fifos_on = unsafe { Port::<u8>::new(COM1 + 2).read() } & 0xc0 == 0xc0;
    // FIFOs on with a 14-byte trigger, and nothing cleared; or off.
    let fifo_control = if fifos_on { 0xc1 } else { 0x00 };
    for (register, value) in [
        (COM1_INTERRUPT_ENABLE, 0x00), // no interrupts while setting up
        (COM1 + 3, 0x80),              // DLAB: the divisor latch
        (COM1, 0x03),                  // divisor 3: 38400 baud
        (COM1_INTERRUPT_ENABLE, 0x00), // its high byte
        (COM1 + 3, 0x03),              // 8 bits, no parity, 1 stop bit
        (COM1 + 2, fifo_control),
        (COM1 + 4, 0x0b), // DTR, RTS, OUT2 (the interrupt line)
    ] {
        // SAFETY: COM1's registers at 0x3f8..0x3ff, written in the order
        // a 16550 is set up in; nothing else in the kernel sets COM1 up.
        unsafe { Port::<u8>::new(register).write(value) };
    }
    keep_early_input();
}

/// Keeps what COM1 has received so far.
fn keep_early_input() {
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
