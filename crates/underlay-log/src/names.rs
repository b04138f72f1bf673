//! Entity names as nodes, with the hierarchy `/` in names implies, in
//! memory proportional to the names themselves.
//!
//! A log without declared parent edges gets its tree from its names:
//! the parent of `a/b/c` is `a/b`, whose parent is `a` (a cut at the
//! last `/`, when the part before it is not empty). Prefixes that are not
//! entities become *group* nodes. Stored as strings, the prefixes of one
//! name of *k* parts take O(k × length) bytes: a 60 KB name of 30,000
//! parts took 1.8 GB. Here a node's name is a prefix of an entity's name,
//! stored as (entity, length); each name's prefix hashes come from one
//! pass over it (a polynomial hash modulo the prime 2⁶¹ − 1 with a random
//! base), so building the tree costs time and memory linear in the total
//! length of the names, and finding a name costs its length.
//!
//! [`PathNames`] is what the selection engine's entity graph, `log info`'s
//! tree and the viewer's tree are built on.

/// The modulus of the name hash: the Mersenne prime 2⁶¹ − 1.
const P: u64 = (1 << 61) - 1;

/// `a × b mod P` for `a, b < P`.
fn mul_mod(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    let s = (r as u64 & P) + (r >> 61) as u64;
    if s >= P { s - P } else { s }
}

/// The hash base: random per process, so no input can be made to collide
/// on purpose.
fn base() -> u64 {
    use std::hash::BuildHasher as _;
    static BASE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BASE
        .get_or_init(|| std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64) % (P - 256) + 256)
}

/// The hash after `h` of the bytes `bytes`.
fn extend(mut h: u64, bytes: &[u8]) -> u64 {
    let b = base();
    for &c in bytes {
        h = mul_mod(h, b) + u64::from(c) + 1;
        if h >= P {
            h -= P;
        }
    }
    h
}

/// Hashes of every prefix of `name` that ends before a `/` (at cut
/// positions > 0), and of the whole name, in one pass.
fn prefix_hashes(name: &str) -> (Vec<(u32, u64)>, u64) {
    let bytes = name.as_bytes();
    let mut cuts = Vec::new();
    let mut h = 0;
    let mut from = 0;
    for (i, &c) in bytes.iter().enumerate() {
        if c == b'/' && i > 0 {
            h = extend(h, &bytes[from..i]);
            from = i;
            cuts.push((i as u32, h));
        }
    }
    (cuts, extend(h, &bytes[from..]))
}

/// An open-addressing table from name hashes to nodes (insertions only).
#[derive(Clone, Debug, Default, PartialEq)]
struct Slots {
    /// Node + 1 per slot, 0 = empty; the length is a power of two.
    slots: Vec<u32>,
}

impl Slots {
    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    /// The node whose hash is `h` and for which `is(node)` holds.
    fn find(&self, h: u64, is: impl Fn(usize) -> bool) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mut i = (h as usize) & self.mask();
        loop {
            match self.slots[i] {
                0 => return None,
                n if is(n as usize - 1) => return Some(n as usize - 1),
                _ => i = (i + 1) & self.mask(),
            }
        }
    }

    /// Adds `node` (hash `h`); `hashes` holds every node's hash for growing.
    fn insert(&mut self, node: usize, h: u64, hashes: &[u64]) {
        if (node + 1) * 2 > self.slots.len() {
            let mut grown = Slots {
                slots: vec![0; (self.slots.len() * 2).max(16)],
            };
            for &n in self.slots.iter().filter(|&&n| n != 0) {
                grown.put(n, hashes[n as usize - 1]);
            }
            *self = grown;
        }
        self.put(node as u32 + 1, h);
    }

    fn put(&mut self, slot_value: u32, h: u64) {
        let mut i = (h as usize) & self.mask();
        while self.slots[i] != 0 {
            i = (i + 1) & self.mask();
        }
        self.slots[i] = slot_value;
    }
}

/// Nodes named by entity names and, when the hierarchy is implied, by
/// their `/` prefixes (see the module docs).
///
/// Nodes `0..entity_count()` are the entities in id order; later nodes are
/// groups, numbered in the order a breadth-first pass over the nodes
/// meets them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathNames {
    /// The entities' names.
    texts: Vec<Box<str>>,
    /// Per node: the entity whose name it is a prefix of, and its length.
    nodes: Vec<(u32, u32)>,
    /// Per node: its hash.
    hashes: Vec<u64>,
    /// Per node: its implied parent + 1, 0 for none (always 0 when the
    /// hierarchy is not implied).
    parent: Vec<u32>,
    slots: Slots,
}

impl PathNames {
    /// The nodes of `names` (distinct, as interned entity names are), with
    /// the implied hierarchy and its group nodes when `implied`.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>, implied: bool) -> Self {
        let mut t = PathNames::default();
        let mut cuts: Vec<Vec<(u32, u64)>> = Vec::new();
        for (i, name) in names.into_iter().enumerate() {
            let (c, h) = prefix_hashes(name);
            t.texts.push(name.into());
            t.nodes.push((i as u32, name.len() as u32));
            t.hashes.push(h);
            t.parent.push(0);
            t.slots.insert(i, h, &t.hashes);
            if implied {
                cuts.push(c);
            }
        }
        if !implied {
            return t;
        }
        // Groups are appended and get their own parent in turn.
        let mut node = 0;
        while node < t.nodes.len() {
            let (text, len) = t.nodes[node];
            let text_cuts = &cuts[text as usize];
            // The last cut before the end of this node's name.
            let k = text_cuts.partition_point(|&(c, _)| c < len);
            if k > 0 {
                let (cut, h) = text_cuts[k - 1];
                let prefix = &t.texts[text as usize][..cut as usize];
                let p = match t.slots.find(h, |n| t.hashes[n] == h && t.name(n) == prefix) {
                    Some(p) => p,
                    None => {
                        let p = t.nodes.len();
                        t.nodes.push((text, cut));
                        t.hashes.push(h);
                        t.parent.push(0);
                        t.slots.insert(p, h, &t.hashes);
                        p
                    }
                };
                t.parent[node] = p as u32 + 1;
            }
            node += 1;
        }
        t
    }

    /// Number of nodes (entities and groups).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there is no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Number of entity nodes (the first ones).
    pub fn entity_count(&self) -> usize {
        self.texts.len()
    }

    /// The name of `node` (empty for a node out of range).
    pub fn name(&self, node: usize) -> &str {
        self.nodes
            .get(node)
            .and_then(|&(text, len)| self.texts.get(text as usize)?.get(..len as usize))
            .unwrap_or("")
    }

    /// The node named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        let h = extend(0, name.as_bytes());
        self.slots
            .find(h, |n| self.hashes[n] == h && self.name(n) == name)
    }

    /// The implied parent of `node` (`None` for a root, and always when
    /// the hierarchy is declared).
    pub fn implied_parent(&self, node: usize) -> Option<usize> {
        match self.parent.get(node) {
            Some(&p) if p > 0 => Some(p as usize - 1),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_become_groups_once() {
        let t = PathNames::new(
            ["robots/blue/3", "robots", "ball", "a//b", "/x", "planner/"],
            true,
        );
        let names: Vec<&str> = (0..t.len()).map(|n| t.name(n)).collect();
        assert_eq!(
            names,
            [
                "robots/blue/3",
                "robots",
                "ball",
                "a//b",
                "/x",
                "planner/",
                "robots/blue",
                "a/",
                "planner",
                "a"
            ]
        );
        let parent = |s: &str| t.implied_parent(t.find(s).unwrap()).map(|p| t.name(p));
        assert_eq!(parent("robots/blue/3"), Some("robots/blue"));
        assert_eq!(parent("robots/blue"), Some("robots"));
        assert_eq!(parent("a//b"), Some("a/"));
        assert_eq!(parent("a/"), Some("a"));
        assert_eq!(parent("/x"), None);
        assert_eq!(parent("planner/"), Some("planner"));
        assert_eq!(t.find("robots/blu"), None);
        assert_eq!(t.entity_count(), 6);
        let declared = PathNames::new(["robots/blue/3", "robots"], false);
        assert_eq!(declared.len(), 2);
        assert_eq!(declared.implied_parent(0), None);
        assert_eq!(declared.find("robots"), Some(1));
    }

    /// Issue 15, finding 1: one name of 30,000 parts (60 KB) makes 30,000
    /// nodes stored in memory proportional to the name, not 30,000 copies
    /// of its prefixes (0.9 GB).
    #[test]
    fn one_long_name_costs_memory_proportional_to_its_length() {
        let parts = 30_000;
        let name = vec!["a"; parts].join("/");
        let t = PathNames::new([name.as_str(), "a/a/b"], true);
        assert_eq!(t.len(), parts + 1);
        let stored: usize = t.texts.iter().map(|s| s.len()).sum();
        assert!(stored <= name.len() + 5);
        // The chain goes all the way up, and "a/a/b" joins it.
        let mut depth = 0;
        let mut n = 0;
        while let Some(p) = t.implied_parent(n) {
            n = p;
            depth += 1;
        }
        assert_eq!((depth, t.name(n)), (parts - 1, "a"));
        assert_eq!(t.implied_parent(1).map(|p| t.name(p)), Some("a/a"));
        assert_eq!(
            t.find(&name[..name.len() - 2]).map(|n| t.name(n).len()),
            Some(name.len() - 2)
        );
    }
}
