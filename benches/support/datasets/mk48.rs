//! `mk48`: 1 000 updates a naval game's server sends its players.
//!
//! An update is for a world of 200 to 399 players: 20 to 39 contacts
//! (ships, subs, boats seen by the player), the score, the world's radius
//! (the square root of 15 000 per player, give or take 50) and 3 to 9
//! terrain updates. A contact's type is drawn by how common each is (G5
//! and Zubr boats most, Bismarck least); 70 % are visible, and only those
//! carry their type, their player, their reloads (one flag per weapon of
//! the type, all drawn with one probability) and their turret angles
//! (mostly near a common heading). Speeds are 140 to 899 forwards 80 % of
//! the time, 0 for 10 %, and slow reverse otherwise; only the submarine
//! (Yasen) dives, nine times in ten. A terrain update is a chunk's
//! coordinates inside the world and its bytes: 3 to 8 of them, or 900 to
//! 1 099 for one chunk in fifty.
//!
//! Many small integers and short vectors: the dataset where integer and
//! header sizes count.
//!
//! Layouts: the terrain bytes are a MessagePack `bin` for codecbus
//! (`#[codec(bytes)]`), zerompk (its default for `Vec<u8>`) and msgpacker
//! (`binary`); serde has no `bin` for a `Vec<u8>` without an adapter, so
//! rmp-serde writes an array of integers, as in the public benchmark.
//! zerompk writes the signed fields (altitudes, speeds, chunk ids) in
//! signed forms, codecbus and rmp-serde the non-negative ones unsigned: the
//! same values, sometimes a byte apart.

use codecbus::MessageCodec;

use super::generate::Rng;

/// The number of updates.
pub(crate) const UPDATES: usize = 1_000;

/// The kinds of vessel.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
)]
#[repr(u8)]
pub(crate) enum EntityType {
    ArleighBurke,
    Bismarck,
    Clemenceau,
    Fletcher,
    G5,
    Iowa,
    Kolkata,
    Osa,
    Yasen,
    Zubr,
}

/// Every kind with how common it is, its turrets and its weapons.
const KINDS: [(EntityType, f32, usize, usize); 10] = [
    (EntityType::ArleighBurke, 2.14, 1, 20),
    (EntityType::Bismarck, 0.52, 4, 10),
    (EntityType::Clemenceau, 0.97, 4, 16),
    (EntityType::Fletcher, 1.46, 4, 18),
    (EntityType::G5, 13.16, 0, 2),
    (EntityType::Iowa, 1.55, 3, 28),
    (EntityType::Kolkata, 0.83, 1, 15),
    (EntityType::Osa, 7.25, 2, 6),
    (EntityType::Yasen, 4.06, 0, 14),
    (EntityType::Zubr, 12.92, 3, 11),
];

/// Where a contact is and how it moves.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Copy,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct Transform {
    pub(crate) altitude: i8,
    pub(crate) angle: u16,
    pub(crate) position: (f32, f32),
    pub(crate) velocity: i16,
}

/// Where a contact is steered.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Copy,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct Guidance {
    pub(crate) angle: u16,
    pub(crate) submerge: bool,
    pub(crate) velocity: i16,
}

/// Something a player sees.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct Contact {
    pub(crate) damage: u8,
    pub(crate) entity_id: u32,
    pub(crate) entity_type: Option<EntityType>,
    pub(crate) guidance: Guidance,
    pub(crate) player_id: Option<u16>,
    pub(crate) reloads: Vec<bool>,
    pub(crate) transform: Transform,
    pub(crate) turret_angles: Vec<u16>,
}

/// A chunk of terrain that changed.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct TerrainUpdate {
    pub(crate) chunk_id: (i8, i8),
    #[codec(bytes)]
    #[msgpacker(binary)]
    pub(crate) data: Vec<u8>,
}

/// What one player is sent in one tick.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct Update {
    pub(crate) contacts: Vec<Contact>,
    pub(crate) score: u32,
    pub(crate) world_radius: f32,
    pub(crate) terrain_updates: Vec<TerrainUpdate>,
}

/// The dataset.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct Updates {
    pub(crate) updates: Vec<Update>,
}

/// Whether a contact of this kind is under water.
fn submerged(rng: &mut Rng, kind: EntityType) -> bool {
    kind == EntityType::Yasen && rng.chance(0.9)
}

fn velocity(rng: &mut Rng) -> i16 {
    const SLOWEST: i64 = 140;
    const FASTEST: i64 = 900;
    // Reverse is a quarter of the speed.
    let speed = match rng.below(100) {
        0..80 => rng.range(SLOWEST..FASTEST),
        80..90 => 0,
        _ => rng.range(-FASTEST / 4..-SLOWEST / 4),
    };
    speed as i16
}

fn contact(rng: &mut Rng, players: u16) -> Contact {
    let (kind, _, turrets, weapons) = KINDS[rng.weighted(&KINDS.map(|k| k.1))];
    let visible = rng.chance(0.7);
    let damage = if visible && rng.chance(0.6) {
        0
    } else {
        rng.below(200) as u8
    };
    let entity_id = rng.below(u64::from(players) * 20) as u32;
    let guidance = Guidance {
        angle: rng.u16(),
        submerge: submerged(rng, kind),
        velocity: velocity(rng),
    };
    let player_id = visible.then(|| rng.below(u64::from(players)) as u16);
    let reloads = if visible {
        let p = rng.f64();
        (0..weapons).map(|_| rng.chance(p)).collect()
    } else {
        Vec::new()
    };
    const RANGE: f32 = 750.0;
    let transform = Transform {
        altitude: if submerged(rng, kind) {
            rng.range(-120..-35) as i8
        } else {
            0
        },
        angle: rng.u16(),
        position: (rng.f32_in(-RANGE..RANGE), rng.f32_in(-RANGE..RANGE)),
        velocity: velocity(rng),
    };
    let turret_angles = if visible {
        let heading = rng.u16();
        (0..turrets)
            .map(|_| {
                if rng.chance(0.75) {
                    heading.wrapping_add_signed(rng.range(-200..200) as i16)
                } else {
                    rng.u16()
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    Contact {
        damage,
        entity_id,
        entity_type: visible.then_some(kind),
        guidance,
        player_id,
        reloads,
        transform,
        turret_angles,
    }
}

fn terrain_update(rng: &mut Rng, radius: i8) -> TerrainUpdate {
    let radius = i64::from(radius);
    let len = if rng.chance(0.02) { 900..1100 } else { 3..9 };
    TerrainUpdate {
        chunk_id: (
            rng.range(-radius..radius) as i8,
            rng.range(-radius..radius) as i8,
        ),
        data: rng.vec(len, Rng::u8),
    }
}

fn update(rng: &mut Rng) -> Update {
    let players = rng.range(200..400) as u16;
    let world_radius = (f32::from(players) * 15_000.0).sqrt() + rng.f32_in(-50.0..50.0);
    let terrain_radius = (world_radius / 1_600.0).ceil() as i8;
    let contacts = rng.vec(20..40, |rng| contact(rng, players));
    let score = (rng.f32().powi(4) * 5_000.0) as u32 + rng.below(50) as u32;
    Update {
        contacts,
        score,
        world_radius,
        terrain_updates: rng.vec(3..10, |rng| terrain_update(rng, terrain_radius)),
    }
}

/// The dataset, the same on every run.
pub(crate) fn generate(rng: &mut Rng) -> Updates {
    Updates {
        updates: (0..UPDATES).map(|_| update(rng)).collect(),
    }
}
