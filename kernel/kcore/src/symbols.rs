//! Function symbols of an ELF file, for tools that name addresses (`prof`):
//! the `.symtab` section's `STT_FUNC` entries, sorted by address, with Rust's
//! mangled names turned back into paths (`user::spin::loop_a`) by the
//! `rustc-demangle` crate (rust-lang's own; both manglings, `no_std`).
//! Programs in the ramdisk keep their symbol tables (xtask strips only debug
//! information).

extern crate alloc;
use alloc::string::String;
use alloc::vec::Vec;

use crate::elf::{u16_at, u32_at, u64_at};

/// A function: `[addr, addr + size)` is its code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub addr: u64,
    pub size: u64,
    pub name: String,
}

const SHT_SYMTAB: u32 = 2;
const STT_FUNC: u8 = 2;

/// The defined functions of the ELF64 file `file`, sorted by address
/// (empty if it has no symbol table or is not ELF64).
pub fn functions(file: &[u8]) -> Vec<Symbol> {
    read_functions(file).unwrap_or_default()
}

fn read_functions(file: &[u8]) -> Option<Vec<Symbol>> {
    if file.get(..4)? != b"\x7fELF" || *file.get(4)? != 2 {
        return None;
    }
    let shoff = u64_at(file, 0x28)? as usize;
    let shentsize = u16_at(file, 0x3a)? as usize;
    let shnum = u16_at(file, 0x3c)? as usize;
    let section = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
    let symtab = (0..shnum).find_map(|i| {
        let at = section(i)?;
        (u32_at(file, at + 4)? == SHT_SYMTAB).then_some(at)
    })?;
    let (off, size) = (
        u64_at(file, symtab + 0x18)? as usize,
        u64_at(file, symtab + 0x20)? as usize,
    );
    let strtab = section(u32_at(file, symtab + 0x28)? as usize)?;
    let str_off = u64_at(file, strtab + 0x18)? as usize;
    let str_size = u64_at(file, strtab + 0x20)? as usize;
    let strings = file.get(str_off..str_off.checked_add(str_size)?)?;
    let mut out = Vec::new();
    for entry in file.get(off..off.checked_add(size)?)?.as_chunks::<24>().0 {
        let info = entry[4];
        let shndx = u16_at(entry, 6)?;
        let addr = u64_at(entry, 8)?;
        if info & 0xf != STT_FUNC || shndx == 0 || addr == 0 {
            continue;
        }
        let name_at = u32_at(entry, 0)? as usize;
        let raw = strings.get(name_at..)?;
        let raw = &raw[..raw.iter().position(|&b| b == 0).unwrap_or(raw.len())];
        out.push(Symbol {
            addr,
            size: u64_at(entry, 16)?,
            name: demangle(core::str::from_utf8(raw).ok()?),
        });
    }
    out.sort_by_key(|s| s.addr);
    Some(out)
}

/// The function containing `pc`, if any (`functions` sorted by address).
pub fn containing(functions: &[Symbol], pc: u64) -> Option<&Symbol> {
    let i = functions.partition_point(|s| s.addr <= pc).checked_sub(1)?;
    let s = &functions[i];
    (pc < s.addr + s.size.max(1)).then_some(s)
}

/// A Rust symbol (v0 `_R…` or legacy `_ZN…`) as a path without its hash,
/// by rust-lang's own demangler; any other name (C's) as it is.
pub fn demangle(name: &str) -> String {
    alloc::format!("{:#}", rustc_demangle::demangle(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_legacy_names_become_paths() {
        assert_eq!(
            demangle("_ZN4user4spin6loop_a17h0123456789abcdefE"),
            "user::spin::loop_a"
        );
        assert_eq!(
            demangle(
                "_ZN47_$LT$alloc..string..String$u20$as$u20$Clone$GT$5clone17h0123456789abcdefE"
            ),
            "<alloc::string::String as Clone>::clone"
        );
        assert_eq!(demangle("main"), "main");
        assert_eq!(
            demangle("_ZN3bad"),
            "_ZN3bad",
            "a broken name stays as it is"
        );
        assert_eq!(
            demangle("_RNvNtCs1234_4user4spin6loop_a"),
            "user::spin::loop_a"
        );
    }

    #[test]
    fn finds_the_function_of_a_pc() {
        let f = |addr, size, name: &str| Symbol {
            addr,
            size,
            name: String::from(name),
        };
        let table = [
            f(0x1000, 0x20, "a"),
            f(0x1020, 0x10, "b"),
            f(0x2000, 8, "c"),
        ];
        assert_eq!(containing(&table, 0x1000).unwrap().name, "a");
        assert_eq!(containing(&table, 0x102f).unwrap().name, "b");
        assert!(containing(&table, 0x1030).is_none(), "a gap");
        assert!(containing(&table, 0xfff).is_none());
    }

    #[test]
    fn reads_the_symbols_of_a_real_elf() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let functions = functions(&me);
        assert!(functions.len() > 10, "a test binary has functions");
        assert!(
            functions.windows(2).all(|w| w[0].addr <= w[1].addr),
            "sorted"
        );
        assert!(
            functions.iter().any(|s| s
                .name
                .contains("symbols::tests::finds_the_function_of_a_pc")),
            "this test is among them"
        );
        assert!(super::functions(b"not an elf").is_empty());
    }
}
