//! ACPI, as far as finding the processors needs it: the tables are read by
//! the kernel out of physical memory and handed here as byte slices.
//!
//! The firmware leaves a Root System Description Pointer (RSDP; the
//! bootloader passes its address) that names the eXtended System
//! Description Table (XSDT, 64-bit entries) or, before ACPI 2.0, the RSDT
//! (32-bit entries). That table lists the addresses of the others, each
//! with the same 36-byte header (a 4-byte signature, its length, a
//! checksum). The Multiple APIC Description Table (signature "APIC", the
//! MADT) lists the interrupt controllers: one Local APIC entry per
//! processor (type 0, or type 9 for an x2APIC id above 255), with the id
//! the startup IPIs of the multiprocessor work are sent to. Every table's
//! bytes sum to 0 modulo 256; a table that does not is refused, as are
//! lengths that run past what was read, so damaged firmware tables give
//! `None`, never an out-of-bounds read.
//!
//! Written here rather than taken from the `acpi` crate: the kernel needs
//! these three steps only, a student reads them at once, and every one is
//! tested on the host with tables built in the tests.

use alloc::vec::Vec;

use crate::elf::{u32_at, u64_at};

/// Bytes of the header every system description table starts with.
pub const SDT_HEADER: usize = 36;
/// Bytes of an RSDP as ACPI 2.0 and later lay it out (1.0's is 20).
pub const RSDP_LEN: usize = 36;

/// What the RSDP points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Root {
    /// Physical address of the XSDT, or of the RSDT for ACPI 1.0.
    pub table: u64,
    /// Whether `table` is the XSDT (entries of 8 bytes) or the RSDT (4).
    pub wide: bool,
}

/// One processor the MADT lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalApic {
    /// The firmware's processor id (ACPI UID).
    pub processor: u32,
    /// Its local APIC id: where interrupts for it, and the startup IPIs,
    /// are sent.
    pub apic_id: u32,
    /// Enabled, or able to be brought online; a disabled entry is a slot
    /// the firmware lists with no processor in it.
    pub usable: bool,
}

fn sums_to_zero(bytes: &[u8]) -> bool {
    bytes.iter().fold(0u8, |sum, &b| sum.wrapping_add(b)) == 0
}

/// Parses an RSDP (at least its first 20 bytes; 36 for ACPI 2.0 and
/// later): its signature and checksums, and which root table it names.
pub fn parse_rsdp(rsdp: &[u8]) -> Option<Root> {
    if rsdp.get(..8)? != b"RSD PTR " || !sums_to_zero(rsdp.get(..20)?) {
        return None;
    }
    let revision = rsdp[15];
    if revision >= 2 {
        let len = u32_at(rsdp, 20)? as usize;
        if len < RSDP_LEN || !sums_to_zero(rsdp.get(..len)?) {
            return None;
        }
        let xsdt = u64_at(rsdp, 24)?;
        if xsdt != 0 {
            return Some(Root {
                table: xsdt,
                wide: true,
            });
        }
    }
    Some(Root {
        table: u64::from(u32_at(rsdp, 16)?),
        wide: false,
    })
}

/// The length a table's header gives (at least the header's own): how
/// many bytes to read for the whole table.
pub fn table_len(header: &[u8]) -> Option<usize> {
    let len = u32_at(header, 4)? as usize;
    (len >= SDT_HEADER).then_some(len)
}

/// A whole table's signature, if its length and checksum hold.
pub fn signature(table: &[u8]) -> Option<[u8; 4]> {
    let len = table_len(table)?;
    if table.len() < len || !sums_to_zero(&table[..len]) {
        return None;
    }
    table[..4].try_into().ok()
}

/// The table addresses an XSDT (`wide`) or RSDT lists.
pub fn root_entries(root: &[u8], wide: bool) -> Option<Vec<u64>> {
    let sig: &[u8; 4] = if wide { b"XSDT" } else { b"RSDT" };
    if signature(root)? != *sig {
        return None;
    }
    let len = table_len(root)?;
    let size = if wide { 8 } else { 4 };
    (SDT_HEADER..len - (len - SDT_HEADER) % size)
        .step_by(size)
        .map(|at| {
            if wide {
                u64_at(root, at)
            } else {
                u32_at(root, at).map(u64::from)
            }
        })
        .collect()
}

/// The processors a whole MADT lists, in its order.
pub fn madt_processors(madt: &[u8]) -> Option<Vec<LocalApic>> {
    if signature(madt)? != *b"APIC" {
        return None;
    }
    let len = table_len(madt)?;
    // After the header: the local APIC's address (4) and flags (4).
    let mut at = SDT_HEADER + 8;
    let mut found = Vec::new();
    while at + 2 <= len {
        let (kind, entry_len) = (madt[at], madt[at + 1] as usize);
        if entry_len < 2 || at + entry_len > len {
            return None;
        }
        let entry = &madt[at..at + entry_len];
        let usable = |flags: u32| flags & 0b11 != 0;
        match (kind, entry_len) {
            (0, 8) => found.push(LocalApic {
                processor: u32::from(entry[2]),
                apic_id: u32::from(entry[3]),
                usable: usable(u32_at(entry, 4)?),
            }),
            (9, 16) => found.push(LocalApic {
                processor: u32_at(entry, 12)?,
                apic_id: u32_at(entry, 4)?,
                usable: usable(u32_at(entry, 8)?),
            }),
            (0 | 9, _) => return None,
            _ => {} // I/O APICs, overrides, NMIs: not needed to count CPUs
        }
        at += entry_len;
    }
    Some(found)
}

/// The physical address of the HPET's registers, from a whole HPET
/// table: its base address is a Generic Address Structure at byte 40
/// (address space, bit width, bit offset, access size, then the 64-bit
/// address), which must be in memory space (0), not I/O ports.
pub fn hpet_base(table: &[u8]) -> Option<u64> {
    if signature(table)? != *b"HPET" || table_len(table)? < SDT_HEADER + 20 {
        return None;
    }
    let memory_space = table[SDT_HEADER + 4] == 0;
    let base = u64_at(table, SDT_HEADER + 8)?;
    (memory_space && base != 0 && base % 1024 == 0).then_some(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn the_hpet_table_gives_its_base() {
        // Event timer block id, then the base address structure, then the
        // HPET number, the minimum tick and the page protection.
        let mut body = vec![0u8; 20];
        body[..4].copy_from_slice(&0x8086_a201u32.to_le_bytes());
        body[4] = 0; // memory space
        body[5] = 64; // register width
        body[8..16].copy_from_slice(&0xfed0_0000u64.to_le_bytes());
        assert_eq!(hpet_base(&table(b"HPET", &body)), Some(0xfed0_0000));
        let mut io = body.clone();
        io[4] = 1; // I/O space: not a base this driver can use
        assert_eq!(hpet_base(&table(b"HPET", &io)), None);
        assert_eq!(hpet_base(&table(b"APIC", &body)), None);
        let mut short = table(b"HPET", &body[..10]);
        fix_checksum(&mut short, 9);
        assert_eq!(hpet_base(&short), None);
    }

    /// Makes `bytes` sum to 0 by setting the byte at `at`.
    fn fix_checksum(bytes: &mut [u8], at: usize) {
        bytes[at] = 0;
        let sum = bytes.iter().fold(0u8, |s, &b| s.wrapping_add(b));
        bytes[at] = sum.wrapping_neg();
    }

    fn table(sig: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut t = vec![0u8; SDT_HEADER];
        t[..4].copy_from_slice(sig);
        t.extend_from_slice(body);
        let len = t.len() as u32;
        t[4..8].copy_from_slice(&len.to_le_bytes());
        fix_checksum(&mut t, 9);
        t
    }

    fn rsdp(revision: u8, rsdt: u32, xsdt: u64) -> Vec<u8> {
        let mut r = vec![0u8; RSDP_LEN];
        r[..8].copy_from_slice(b"RSD PTR ");
        r[15] = revision;
        r[16..20].copy_from_slice(&rsdt.to_le_bytes());
        r[20..24].copy_from_slice(&(RSDP_LEN as u32).to_le_bytes());
        r[24..32].copy_from_slice(&xsdt.to_le_bytes());
        fix_checksum(&mut r[..20], 8);
        fix_checksum(&mut r, 32);
        r
    }

    fn madt(entries: &[&[u8]]) -> Vec<u8> {
        let mut body = vec![0, 0, 0xe0, 0xfe, 1, 0, 0, 0]; // LAPIC at 0xfee00000, PCAT_COMPAT
        for e in entries {
            body.extend_from_slice(e);
        }
        table(b"APIC", &body)
    }

    #[test]
    fn the_rsdp_names_the_xsdt_or_the_rsdt() {
        assert_eq!(
            parse_rsdp(&rsdp(2, 0x1000, 0x2000)),
            Some(Root {
                table: 0x2000,
                wide: true
            })
        );
        // ACPI 1.0: 20 bytes, the RSDT only.
        assert_eq!(
            parse_rsdp(&rsdp(0, 0x1000, 0)[..20]),
            Some(Root {
                table: 0x1000,
                wide: false
            })
        );
        let mut bad = rsdp(2, 0x1000, 0x2000);
        bad[17] ^= 1;
        assert_eq!(parse_rsdp(&bad), None, "first checksum");
        let mut bad = rsdp(2, 0x1000, 0x2000);
        bad[25] ^= 1;
        assert_eq!(parse_rsdp(&bad), None, "extended checksum");
        assert_eq!(parse_rsdp(b"RSD PTR"), None, "short");
    }

    #[test]
    fn root_tables_list_addresses() {
        let mut body = Vec::new();
        body.extend_from_slice(&0x1111u64.to_le_bytes());
        body.extend_from_slice(&0x2222u64.to_le_bytes());
        let xsdt = table(b"XSDT", &body);
        assert_eq!(table_len(&xsdt), Some(SDT_HEADER + 16));
        assert_eq!(root_entries(&xsdt, true), Some(vec![0x1111, 0x2222]));
        let rsdt = table(b"RSDT", &[0x33, 0, 0, 0, 0x44, 0, 0, 0]);
        assert_eq!(root_entries(&rsdt, false), Some(vec![0x33, 0x44]));
        assert_eq!(root_entries(&rsdt, true), None, "an RSDT is no XSDT");
        let mut damaged = xsdt.clone();
        damaged[40] ^= 1;
        assert_eq!(root_entries(&damaged, true), None, "checksum");
        assert_eq!(root_entries(&xsdt[..40], true), None, "cut short");
    }

    #[test]
    fn the_madt_lists_each_processor() {
        let cpu = |id: u8, apic: u8, flags: u8| [0u8, 8, id, apic, flags, 0, 0, 0];
        let io_apic = [1u8, 12, 0, 0, 0, 0, 0xc0, 0xfe, 0, 0, 0, 0];
        let x2 = {
            let mut e = [0u8; 16];
            e[0] = 9;
            e[1] = 16;
            e[4..8].copy_from_slice(&300u32.to_le_bytes());
            e[8] = 1;
            e[12..16].copy_from_slice(&7u32.to_le_bytes());
            e
        };
        let t = madt(&[&cpu(0, 0, 1), &io_apic, &cpu(1, 2, 1), &cpu(2, 4, 0), &x2]);
        let cpus = madt_processors(&t).unwrap();
        let ids: Vec<(u32, bool)> = cpus.iter().map(|c| (c.apic_id, c.usable)).collect();
        assert_eq!(ids, [(0, true), (2, true), (4, false), (300, true)]);
        assert_eq!(cpus[3].processor, 7);
    }

    #[test]
    fn a_damaged_madt_is_refused() {
        let good = madt(&[&[0u8, 8, 0, 0, 1, 0, 0, 0]]);
        assert!(madt_processors(&good).is_some());
        let mut sum = good.clone();
        sum[46] ^= 1;
        assert_eq!(madt_processors(&sum), None, "checksum");
        // An entry whose length runs past the table.
        assert_eq!(madt_processors(&madt(&[&[0u8, 40, 0, 0]])), None);
        // A zero-length entry would loop forever.
        assert_eq!(madt_processors(&madt(&[&[5u8, 0]])), None);
        // A local APIC entry of the wrong size.
        assert_eq!(madt_processors(&madt(&[&[0u8, 6, 0, 0, 1, 0]])), None);
        assert_eq!(madt_processors(&table(b"FACP", &[])), None, "not a MADT");
    }
}
