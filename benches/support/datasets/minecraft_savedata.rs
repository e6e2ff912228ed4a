//! `minecraft_savedata`: the saved state of 500 players of a block game.
//!
//! A player is some forty fields of every kind: two game modes (one of
//! four, each as likely), integers over their whole range, floats in
//! `[0, 1)`, names from short fixed lists (three dimensions, eight item
//! ids, eight entity ids, eight entity names, eight recipes), optional
//! values present half of the time, an inventory of 0 to 39 items and an
//! ender chest of 0 to 26, up to three ridden or carried entities (each
//! present half of the time, each with its own optional name), and a
//! recipe book of 0 to 29 recipes, 0 to 9 of them on display. The view
//! borrows every string.
//!
//! Layouts: zerompk writes the game mode as its number (`c_enum`, as the
//! public benchmark has it); codecbus and rmp-serde write its name, the
//! only form serde's enums and codecbus's plain enums have. zerompk also
//! writes the signed fields in signed forms.

use codecbus::MessageCodec;

use super::Borrowable;
use super::generate::Rng;

/// The number of players.
pub(crate) const PLAYERS: usize = 500;

/// A player's game mode.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    msgpacker::MsgUnpackerBorrowed,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
)]
#[msgpack(c_enum)]
#[repr(u8)]
pub(crate) enum GameType {
    Survival,
    Creative,
    Adventure,
    Spectator,
}

/// A stack of items in a slot.
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
pub(crate) struct Item {
    pub(crate) count: i8,
    pub(crate) slot: u8,
    pub(crate) id: String,
}

/// What a player may do.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    msgpacker::MsgUnpackerBorrowed,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Copy,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct Abilities {
    pub(crate) walk_speed: f32,
    pub(crate) fly_speed: f32,
    pub(crate) may_fly: bool,
    pub(crate) flying: bool,
    pub(crate) invulnerable: bool,
    pub(crate) may_build: bool,
    pub(crate) instabuild: bool,
}

/// A creature or vehicle.
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
pub(crate) struct Entity {
    pub(crate) id: String,
    pub(crate) pos: (f64, f64, f64),
    pub(crate) motion: (f64, f64, f64),
    pub(crate) rotation: (f32, f32),
    pub(crate) fall_distance: f32,
    pub(crate) fire: u16,
    pub(crate) air: u16,
    pub(crate) on_ground: bool,
    pub(crate) no_gravity: bool,
    pub(crate) invulnerable: bool,
    pub(crate) portal_cooldown: i32,
    pub(crate) uuid: [u32; 4],
    pub(crate) custom_name: Option<String>,
    pub(crate) custom_name_visible: bool,
    pub(crate) silent: bool,
    pub(crate) glowing: bool,
}

/// The recipes a player knows.
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
pub(crate) struct RecipeBook {
    pub(crate) recipes: Vec<String>,
    pub(crate) to_be_displayed: Vec<String>,
    pub(crate) is_filtering_craftable: bool,
    pub(crate) is_gui_open: bool,
    pub(crate) is_furnace_filtering_craftable: bool,
    pub(crate) is_furnace_gui_open: bool,
    pub(crate) is_blasting_furnace_filtering_craftable: bool,
    pub(crate) is_blasting_furnace_gui_open: bool,
    pub(crate) is_smoker_filtering_craftable: bool,
    pub(crate) is_smoker_gui_open: bool,
}

/// One player's saved state.
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
pub(crate) struct Player {
    pub(crate) game_type: GameType,
    pub(crate) previous_game_type: GameType,
    pub(crate) score: i64,
    pub(crate) dimension: String,
    pub(crate) selected_item_slot: u32,
    pub(crate) selected_item: Item,
    pub(crate) spawn_dimension: Option<String>,
    pub(crate) spawn_x: i64,
    pub(crate) spawn_y: i64,
    pub(crate) spawn_z: i64,
    pub(crate) spawn_forced: Option<bool>,
    pub(crate) sleep_timer: u16,
    pub(crate) food_exhaustion_level: f32,
    pub(crate) food_saturation_level: f32,
    pub(crate) food_tick_timer: u32,
    pub(crate) xp_level: u32,
    pub(crate) xp_p: f32,
    pub(crate) xp_total: i32,
    pub(crate) xp_seed: i32,
    pub(crate) inventory: Vec<Item>,
    pub(crate) ender_items: Vec<Item>,
    pub(crate) abilities: Abilities,
    pub(crate) entered_nether_position: Option<(f64, f64, f64)>,
    pub(crate) root_vehicle: Option<([u32; 4], Entity)>,
    pub(crate) shoulder_entity_left: Option<Entity>,
    pub(crate) shoulder_entity_right: Option<Entity>,
    pub(crate) seen_credits: bool,
    pub(crate) recipe_book: RecipeBook,
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
pub(crate) struct Players {
    pub(crate) players: Vec<Player>,
}

/// [`Item`], borrowed.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPackerBorrowed,
    bitcode::Encode,
    bitcode::Decode,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct ItemView<'a> {
    pub(crate) count: i8,
    pub(crate) slot: u8,
    pub(crate) id: &'a str,
}

/// [`Entity`], borrowed.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPackerBorrowed,
    bitcode::Encode,
    bitcode::Decode,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct EntityView<'a> {
    pub(crate) id: &'a str,
    pub(crate) pos: (f64, f64, f64),
    pub(crate) motion: (f64, f64, f64),
    pub(crate) rotation: (f32, f32),
    pub(crate) fall_distance: f32,
    pub(crate) fire: u16,
    pub(crate) air: u16,
    pub(crate) on_ground: bool,
    pub(crate) no_gravity: bool,
    pub(crate) invulnerable: bool,
    pub(crate) portal_cooldown: i32,
    pub(crate) uuid: [u32; 4],
    #[serde(borrow)]
    pub(crate) custom_name: Option<&'a str>,
    pub(crate) custom_name_visible: bool,
    pub(crate) silent: bool,
    pub(crate) glowing: bool,
}

/// [`RecipeBook`], borrowed.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPackerBorrowed,
    bitcode::Encode,
    bitcode::Decode,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct RecipeBookView<'a> {
    #[serde(borrow)]
    pub(crate) recipes: Vec<&'a str>,
    #[serde(borrow)]
    pub(crate) to_be_displayed: Vec<&'a str>,
    pub(crate) is_filtering_craftable: bool,
    pub(crate) is_gui_open: bool,
    pub(crate) is_furnace_filtering_craftable: bool,
    pub(crate) is_furnace_gui_open: bool,
    pub(crate) is_blasting_furnace_filtering_craftable: bool,
    pub(crate) is_blasting_furnace_gui_open: bool,
    pub(crate) is_smoker_filtering_craftable: bool,
    pub(crate) is_smoker_gui_open: bool,
}

/// [`Player`], borrowed.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPackerBorrowed,
    bitcode::Encode,
    bitcode::Decode,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct PlayerView<'a> {
    pub(crate) game_type: GameType,
    pub(crate) previous_game_type: GameType,
    pub(crate) score: i64,
    pub(crate) dimension: &'a str,
    pub(crate) selected_item_slot: u32,
    #[serde(borrow)]
    pub(crate) selected_item: ItemView<'a>,
    #[serde(borrow)]
    pub(crate) spawn_dimension: Option<&'a str>,
    pub(crate) spawn_x: i64,
    pub(crate) spawn_y: i64,
    pub(crate) spawn_z: i64,
    pub(crate) spawn_forced: Option<bool>,
    pub(crate) sleep_timer: u16,
    pub(crate) food_exhaustion_level: f32,
    pub(crate) food_saturation_level: f32,
    pub(crate) food_tick_timer: u32,
    pub(crate) xp_level: u32,
    pub(crate) xp_p: f32,
    pub(crate) xp_total: i32,
    pub(crate) xp_seed: i32,
    #[serde(borrow)]
    pub(crate) inventory: Vec<ItemView<'a>>,
    #[serde(borrow)]
    pub(crate) ender_items: Vec<ItemView<'a>>,
    pub(crate) abilities: Abilities,
    pub(crate) entered_nether_position: Option<(f64, f64, f64)>,
    #[serde(borrow)]
    pub(crate) root_vehicle: Option<([u32; 4], EntityView<'a>)>,
    #[serde(borrow)]
    pub(crate) shoulder_entity_left: Option<EntityView<'a>>,
    #[serde(borrow)]
    pub(crate) shoulder_entity_right: Option<EntityView<'a>>,
    pub(crate) seen_credits: bool,
    #[serde(borrow)]
    pub(crate) recipe_book: RecipeBookView<'a>,
}

/// The dataset, borrowed.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPackerBorrowed,
    bitcode::Encode,
    bitcode::Decode,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct PlayersView<'a> {
    #[serde(borrow)]
    pub(crate) players: Vec<PlayerView<'a>>,
}

impl Item {
    fn view(&self) -> ItemView<'_> {
        ItemView {
            count: self.count,
            slot: self.slot,
            id: &self.id,
        }
    }
}

impl Entity {
    fn view(&self) -> EntityView<'_> {
        EntityView {
            id: &self.id,
            pos: self.pos,
            motion: self.motion,
            rotation: self.rotation,
            fall_distance: self.fall_distance,
            fire: self.fire,
            air: self.air,
            on_ground: self.on_ground,
            no_gravity: self.no_gravity,
            invulnerable: self.invulnerable,
            portal_cooldown: self.portal_cooldown,
            uuid: self.uuid,
            custom_name: self.custom_name.as_deref(),
            custom_name_visible: self.custom_name_visible,
            silent: self.silent,
            glowing: self.glowing,
        }
    }
}

impl RecipeBook {
    fn view(&self) -> RecipeBookView<'_> {
        RecipeBookView {
            recipes: self.recipes.iter().map(String::as_str).collect(),
            to_be_displayed: self.to_be_displayed.iter().map(String::as_str).collect(),
            is_filtering_craftable: self.is_filtering_craftable,
            is_gui_open: self.is_gui_open,
            is_furnace_filtering_craftable: self.is_furnace_filtering_craftable,
            is_furnace_gui_open: self.is_furnace_gui_open,
            is_blasting_furnace_filtering_craftable: self.is_blasting_furnace_filtering_craftable,
            is_blasting_furnace_gui_open: self.is_blasting_furnace_gui_open,
            is_smoker_filtering_craftable: self.is_smoker_filtering_craftable,
            is_smoker_gui_open: self.is_smoker_gui_open,
        }
    }
}

impl Player {
    fn view(&self) -> PlayerView<'_> {
        PlayerView {
            game_type: self.game_type,
            previous_game_type: self.previous_game_type,
            score: self.score,
            dimension: &self.dimension,
            selected_item_slot: self.selected_item_slot,
            selected_item: self.selected_item.view(),
            spawn_dimension: self.spawn_dimension.as_deref(),
            spawn_x: self.spawn_x,
            spawn_y: self.spawn_y,
            spawn_z: self.spawn_z,
            spawn_forced: self.spawn_forced,
            sleep_timer: self.sleep_timer,
            food_exhaustion_level: self.food_exhaustion_level,
            food_saturation_level: self.food_saturation_level,
            food_tick_timer: self.food_tick_timer,
            xp_level: self.xp_level,
            xp_p: self.xp_p,
            xp_total: self.xp_total,
            xp_seed: self.xp_seed,
            inventory: self.inventory.iter().map(Item::view).collect(),
            ender_items: self.ender_items.iter().map(Item::view).collect(),
            abilities: self.abilities,
            entered_nether_position: self.entered_nether_position,
            root_vehicle: self.root_vehicle.as_ref().map(|(id, e)| (*id, e.view())),
            shoulder_entity_left: self.shoulder_entity_left.as_ref().map(Entity::view),
            shoulder_entity_right: self.shoulder_entity_right.as_ref().map(Entity::view),
            seen_credits: self.seen_credits,
            recipe_book: self.recipe_book.view(),
        }
    }
}

impl Borrowable for Players {
    type View<'a> = PlayersView<'a>;

    fn view(&self) -> PlayersView<'_> {
        PlayersView {
            players: self.players.iter().map(Player::view).collect(),
        }
    }
}

const DIMENSIONS: [&str; 3] = ["overworld", "nether", "end"];

const ITEM_IDS: [&str; 8] = [
    "dirt",
    "stone",
    "pickaxe",
    "sand",
    "gravel",
    "shovel",
    "chestplate",
    "steak",
];

const ENTITY_IDS: [&str; 8] = [
    "cow", "sheep", "zombie", "skeleton", "spider", "creeper", "parrot", "bee",
];

const ENTITY_NAMES: [&str; 8] = [
    "rainbow", "princess", "steve", "johnny", "missy", "coward", "fairy", "howard",
];

const RECIPES: [&str; 8] = [
    "pickaxe",
    "torch",
    "bow",
    "crafting table",
    "furnace",
    "shears",
    "arrow",
    "tnt",
];

fn game_type(rng: &mut Rng) -> GameType {
    *rng.pick(&[
        GameType::Survival,
        GameType::Creative,
        GameType::Adventure,
        GameType::Spectator,
    ])
}

fn item(rng: &mut Rng) -> Item {
    Item {
        count: rng.u8() as i8,
        slot: rng.u8(),
        id: (*rng.pick(&ITEM_IDS)).to_owned(),
    }
}

fn point(rng: &mut Rng) -> (f64, f64, f64) {
    (rng.f64(), rng.f64(), rng.f64())
}

fn uuid(rng: &mut Rng) -> [u32; 4] {
    [rng.u32(), rng.u32(), rng.u32(), rng.u32()]
}

fn entity(rng: &mut Rng) -> Entity {
    Entity {
        id: (*rng.pick(&ENTITY_IDS)).to_owned(),
        pos: point(rng),
        motion: point(rng),
        rotation: (rng.f32(), rng.f32()),
        fall_distance: rng.f32(),
        fire: rng.u16(),
        air: rng.u16(),
        on_ground: rng.chance(0.5),
        no_gravity: rng.chance(0.5),
        invulnerable: rng.chance(0.5),
        portal_cooldown: rng.u32() as i32,
        uuid: uuid(rng),
        custom_name: rng.maybe(|rng| (*rng.pick(&ENTITY_NAMES)).to_owned()),
        custom_name_visible: rng.chance(0.5),
        silent: rng.chance(0.5),
        glowing: rng.chance(0.5),
    }
}

fn recipe(rng: &mut Rng) -> String {
    (*rng.pick(&RECIPES)).to_owned()
}

fn recipe_book(rng: &mut Rng) -> RecipeBook {
    RecipeBook {
        recipes: rng.vec(0..30, recipe),
        to_be_displayed: rng.vec(0..10, recipe),
        is_filtering_craftable: rng.chance(0.5),
        is_gui_open: rng.chance(0.5),
        is_furnace_filtering_craftable: rng.chance(0.5),
        is_furnace_gui_open: rng.chance(0.5),
        is_blasting_furnace_filtering_craftable: rng.chance(0.5),
        is_blasting_furnace_gui_open: rng.chance(0.5),
        is_smoker_filtering_craftable: rng.chance(0.5),
        is_smoker_gui_open: rng.chance(0.5),
    }
}

fn player(rng: &mut Rng) -> Player {
    Player {
        game_type: game_type(rng),
        previous_game_type: game_type(rng),
        score: rng.u64() as i64,
        dimension: (*rng.pick(&DIMENSIONS)).to_owned(),
        selected_item_slot: rng.u32(),
        selected_item: item(rng),
        spawn_dimension: rng.maybe(|rng| (*rng.pick(&DIMENSIONS)).to_owned()),
        spawn_x: rng.u64() as i64,
        spawn_y: rng.u64() as i64,
        spawn_z: rng.u64() as i64,
        spawn_forced: rng.maybe(|rng| rng.chance(0.5)),
        sleep_timer: rng.u16(),
        food_exhaustion_level: rng.f32(),
        food_saturation_level: rng.f32(),
        food_tick_timer: rng.u32(),
        xp_level: rng.u32(),
        xp_p: rng.f32(),
        xp_total: rng.u32() as i32,
        xp_seed: rng.u32() as i32,
        inventory: rng.vec(0..40, item),
        ender_items: rng.vec(0..27, item),
        abilities: Abilities {
            walk_speed: rng.f32(),
            fly_speed: rng.f32(),
            may_fly: rng.chance(0.5),
            flying: rng.chance(0.5),
            invulnerable: rng.chance(0.5),
            may_build: rng.chance(0.5),
            instabuild: rng.chance(0.5),
        },
        entered_nether_position: rng.maybe(point),
        root_vehicle: rng.maybe(|rng| (uuid(rng), entity(rng))),
        shoulder_entity_left: rng.maybe(entity),
        shoulder_entity_right: rng.maybe(entity),
        seen_credits: rng.chance(0.5),
        recipe_book: recipe_book(rng),
    }
}

/// The dataset, the same on every run.
pub(crate) fn generate(rng: &mut Rng) -> Players {
    Players {
        players: (0..PLAYERS).map(|_| player(rng)).collect(),
    }
}
