//! The kernel's random numbers: ChaCha20 (RFC 8439) used as a generator with
//! "fast key erasure", the construction Linux's `random.c` and OpenBSD's
//! `arc4random` use.
//!
//! The generator holds one 256-bit key. A request runs ChaCha20 with that key
//! and a block counter from zero: the first 32 bytes of the keystream become
//! the new key at once, the rest is the answer. So the key that made a
//! request's bytes is gone before they leave the kernel, and someone who
//! later reads the kernel's memory cannot work backwards to them (forward
//! secrecy). Requests longer than [`MAX_REQUEST`] are served in pieces, each
//! with a fresh key, so one key never encrypts an unbounded stream.
//!
//! Where the seed comes from is the hardware's business (`kernel/src/random.rs`:
//! RDSEED, RDRAND, or the jitter of the time-stamp counter); this file only
//! mixes seed material in ([`Generator::mix`]) and stretches it out. Nothing
//! here estimates entropy: the caller says when the generator is seeded.

/// Bytes handed out per key; a longer request takes several keys in turn.
pub const MAX_REQUEST: usize = 4096;

const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]; // "expand 32-byte k"

fn quarter_round(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(16);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(12);
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(8);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(7);
}

/// One 64-byte ChaCha20 block (RFC 8439 section 2.3): key, 32-bit block
/// counter, 96-bit nonce.
pub fn chacha20_block(key: &[u8; 32], counter: u32, nonce: &[u8; 12]) -> [u8; 64] {
    let mut state = [0u32; 16];
    state[..4].copy_from_slice(&CONSTANTS);
    for (i, word) in key.as_chunks::<4>().0.iter().enumerate() {
        state[4 + i] = u32::from_le_bytes(*word);
    }
    state[12] = counter;
    for (i, word) in nonce.as_chunks::<4>().0.iter().enumerate() {
        state[13 + i] = u32::from_le_bytes(*word);
    }
    let mut working = state;
    for _ in 0..10 {
        // A column round, then a diagonal round.
        quarter_round(&mut working, 0, 4, 8, 12);
        quarter_round(&mut working, 1, 5, 9, 13);
        quarter_round(&mut working, 2, 6, 10, 14);
        quarter_round(&mut working, 3, 7, 11, 15);
        quarter_round(&mut working, 0, 5, 10, 15);
        quarter_round(&mut working, 1, 6, 11, 12);
        quarter_round(&mut working, 2, 7, 8, 13);
        quarter_round(&mut working, 3, 4, 9, 14);
    }
    let mut out = [0u8; 64];
    for (i, chunk) in out.as_chunks_mut::<4>().0.iter_mut().enumerate() {
        chunk.copy_from_slice(&working[i].wrapping_add(state[i]).to_le_bytes());
    }
    out
}

/// The generator's state: a key, and whether anything has been mixed in.
pub struct Generator {
    key: [u8; 32],
    seeded: bool,
}

impl Default for Generator {
    fn default() -> Self {
        Self::new()
    }
}

impl Generator {
    /// A generator that has seen no seed yet: its output is predictable
    /// until [`Generator::mix`] is called.
    pub const fn new() -> Generator {
        Generator {
            key: [0; 32],
            seeded: false,
        }
    }

    pub fn seeded(&self) -> bool {
        self.seeded
    }

    /// Mixes `material` into the key: the key becomes the first 32 bytes of
    /// ChaCha20 keyed with the old key XOR a 32-byte piece of the material,
    /// piece after piece. What was in the key stays in (each step depends on
    /// it), and a piece the attacker chose cannot cancel what came before.
    pub fn mix(&mut self, material: &[u8]) {
        for piece in material.chunks(32) {
            let mut keyed = self.key;
            for (k, m) in keyed.iter_mut().zip(piece) {
                *k ^= m;
            }
            let block = chacha20_block(&keyed, 0, b"profkern-mix");
            self.key.copy_from_slice(&block[..32]);
        }
        self.seeded = true;
    }

    /// A generator of its own for one request, keyed with 32 bytes of this
    /// one's output (so this one's key is replaced as well).
    pub fn split(&mut self) -> Generator {
        let mut key = [0u8; 32];
        self.fill(&mut key);
        Generator {
            key,
            seeded: self.seeded,
        }
    }

    /// Fills `out` with random bytes, replacing the key before returning.
    pub fn fill(&mut self, out: &mut [u8]) {
        for request in out.chunks_mut(MAX_REQUEST) {
            let key = self.key;
            let mut counter = 0;
            let mut block = chacha20_block(&key, counter, &[0; 12]);
            self.key.copy_from_slice(&block[..32]);
            let mut have = &block[32..];
            let mut filled = 0;
            while filled < request.len() {
                if have.is_empty() {
                    counter += 1;
                    block = chacha20_block(&key, counter, &[0; 12]);
                    have = &block[..];
                }
                let n = have.len().min(request.len() - filled);
                request[filled..filled + n].copy_from_slice(&have[..n]);
                have = &have[n..];
                filled += n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn block_matches_rfc_8439_section_2_3_2() {
        let key: [u8; 32] = core::array::from_fn(|i| i as u8);
        let nonce = [0, 0, 0, 9, 0, 0, 0, 0x4a, 0, 0, 0, 0];
        let block = chacha20_block(&key, 1, &nonce);
        assert_eq!(
            hex(&block),
            "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e\
             d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
        );
    }

    #[test]
    fn block_matches_rfc_8439_appendix_a1_test_vector_1() {
        let block = chacha20_block(&[0; 32], 0, &[0; 12]);
        assert_eq!(
            hex(&block),
            "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7\
             da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
        );
    }

    #[test]
    fn the_key_changes_with_every_request() {
        let mut g = Generator::new();
        g.mix(b"seed");
        let mut a = [0u8; 16];
        let mut b = [0u8; 16];
        g.fill(&mut a);
        g.fill(&mut b);
        assert_ne!(a, b);
        // The output is the keystream after the 32 bytes that became the key.
        let mut again = Generator::new();
        again.mix(b"seed");
        let block = chacha20_block(&again.key, 0, &[0; 12]);
        assert_eq!(a, block[32..48]);
    }

    #[test]
    fn long_requests_are_served_in_pieces_with_fresh_keys() {
        let mut g = Generator::new();
        g.mix(&[7; 64]);
        let mut out = vec![0u8; 3 * MAX_REQUEST + 100];
        g.fill(&mut out);
        // No piece repeats the one before it, and nothing is left zero in a run.
        assert_ne!(out[..MAX_REQUEST], out[MAX_REQUEST..2 * MAX_REQUEST]);
        assert!(out.windows(32).all(|w| w.iter().any(|&b| b != 0)));
        let ones: u32 = out.iter().map(|b| b.count_ones()).sum();
        let bits = out.len() as f64 * 8.0;
        assert!((ones as f64 / bits - 0.5).abs() < 0.01, "{ones} of {bits}");
    }

    #[test]
    fn a_split_generator_owes_nothing_to_what_follows() {
        let mut g = Generator::new();
        g.mix(b"seed");
        let mut child = g.split();
        assert!(child.seeded());
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        child.fill(&mut a);
        g.fill(&mut b);
        assert_ne!(a, b);
        assert_ne!(child.key, g.key);
    }

    #[test]
    fn mixing_depends_on_everything_mixed_before() {
        let mut a = Generator::new();
        let mut b = Generator::new();
        assert!(!a.seeded());
        a.mix(b"first");
        a.mix(b"second");
        b.mix(b"other");
        b.mix(b"second");
        assert!(a.seeded());
        assert_ne!(a.key, b.key);
    }
}
