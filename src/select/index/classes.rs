//! The class table of an index: every distinct (entity, level) pair of a
//! log's primitives gets a dense 2-byte id, so a query filters by reading
//! small arrays instead of the primitives.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::log::{EntityId, Primitive};

/// What the filter needs of a primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Key {
    pub(super) entity: EntityId,
    pub(super) level: i32,
}

/// The class of a primitive: which distinct (entity, level) pair it has.
pub(super) type Class = u16;

/// The class of primitives whose pair came after the first 65,535 distinct
/// ones: the query reads such primitives themselves.
pub(super) const ESCAPE: Class = Class::MAX;

/// Interns the (entity, level) pairs of primitives as dense class ids.
#[derive(Default)]
pub(super) struct Classes {
    ids: HashMap<Key, Class, BuildHasherDefault<MixHasher>>,
    pub(super) keys: Vec<Key>,
}

impl Classes {
    pub(super) fn of(&mut self, p: &Primitive) -> Class {
        let key = Key {
            entity: p.entity,
            level: p.level,
        };
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        match Class::try_from(self.keys.len()) {
            Ok(id) if id < ESCAPE => {
                self.ids.insert(key, id);
                self.keys.push(key);
                id
            }
            _ => ESCAPE,
        }
    }
}

/// A fast hasher for the small keys of [`Classes`] (not DoS-resistant,
/// which is fine for a lookup table built from one log).
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    fn write_i32(&mut self, x: i32) {
        self.write_u64(u64::from(x as u32));
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}
