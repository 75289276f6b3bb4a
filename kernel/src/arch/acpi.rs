//! The processors of this machine, as the firmware's ACPI tables list them.
//!
//! The bootloader passes the address of the RSDP; from there the root
//! table (XSDT or RSDT) leads to the MADT, whose Local APIC entries are the
//! processors (kcore/src/acpi.rs parses each table and says why the walk
//! goes this way); the HPET's table gives where its registers are. This file only reads the tables out of physical memory
//! (`mm::read_physical`), each in two steps: its header, for its length,
//! then the whole of it.
//!
//! Today the count is reported at boot; starting the other processors
//! (INIT and startup IPIs to these APIC ids) is the multiprocessor work's.

use alloc::vec;
use alloc::vec::Vec;
use kcore::acpi::{self, LocalApic};

/// Longest table read (a MADT lists a few entries per processor).
const TABLE_MAX: usize = 64 * 1024;

/// The whole table at physical address `at`.
fn read_table(at: u64) -> Option<Vec<u8>> {
    let mut header = [0u8; acpi::SDT_HEADER];
    crate::mm::read_physical(at, &mut header)?;
    let len = acpi::table_len(&header).filter(|&len| len <= TABLE_MAX)?;
    let mut table = vec![0u8; len];
    crate::mm::read_physical(at, &mut table)?;
    Some(table)
}

/// The processors the MADT lists, from the RSDP at `rsdp` (physical), or
/// why they could not be found.
pub fn processors(rsdp: Option<u64>) -> Result<Vec<LocalApic>, &'static str> {
    find_table(rsdp, *b"APIC")?
        .ok_or("no MADT among the ACPI tables")
        .and_then(|madt| acpi::madt_processors(&madt).ok_or("the MADT is damaged"))
}

/// The physical address of the HPET's registers, from its table.
pub fn hpet(rsdp: Option<u64>) -> Result<u64, &'static str> {
    find_table(rsdp, *b"HPET")?
        .ok_or("no HPET among the ACPI tables")
        .and_then(|table| acpi::hpet_base(&table).ok_or("the HPET table is damaged"))
}

/// The first table with `signature` the root table lists, from the RSDP
/// at `rsdp`; Err when the way there is broken.
fn find_table(rsdp: Option<u64>, signature: [u8; 4]) -> Result<Option<Vec<u8>>, &'static str> {
    let rsdp = rsdp.ok_or("the bootloader found no ACPI RSDP")?;
    let mut bytes = [0u8; acpi::RSDP_LEN];
    // An ACPI 1.0 RSDP is 20 bytes, and may end just before what follows.
    crate::mm::read_physical(rsdp, &mut bytes)
        .or_else(|| crate::mm::read_physical(rsdp, &mut bytes[..20]))
        .ok_or("the RSDP lies outside memory")?;
    let root = acpi::parse_rsdp(&bytes).ok_or("the RSDP is damaged")?;
    let root_table = read_table(root.table).ok_or("the root table is unreadable")?;
    let entries = acpi::root_entries(&root_table, root.wide).ok_or("the root table is damaged")?;
    Ok(entries
        .into_iter()
        .filter_map(read_table)
        .find(|t| acpi::signature(t) == Some(signature)))
}
