//! The demo's MCP Apps view: `roll_dice` rolls and names `ui://wharf-demo/dice`, a view that
//! draws the dice and rolls again through `roll_again`, a tool only the view may call.

use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};

use wharf::protocol::{CallToolResult, ViewMeta, Visibility};
use wharf::{Args, ResourceDef, ToolDef};

/// Where the view is served.
const DICE_VIEW: &str = "ui://wharf-demo/dice";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct DiceArgs {
    /// How many dice to roll.
    #[serde(default = "default_count")]
    #[schemars(range(min = 1, max = 20))]
    count: u32,
    /// How many sides each die has.
    #[serde(default = "default_sides")]
    #[schemars(range(min = 2, max = 100))]
    sides: u32,
}

fn default_count() -> u32 {
    2
}

fn default_sides() -> u32 {
    6
}

/// A die's face, from 1 to `sides`: a xorshift step over a per-process random seed and a
/// counter (a demo's dice, not a secret).
fn face(sides: u32) -> u32 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut state = RandomState::new().hash_one(COUNTER.fetch_add(1, Ordering::Relaxed)) | 1;
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    u32::try_from(state % u64::from(sides)).unwrap_or(0) + 1
}

/// Rolls `args`: the total for the model, the dice for the view.
fn roll(args: &DiceArgs) -> CallToolResult {
    let rolls: Vec<u32> = (0..args.count).map(|_| face(args.sides)).collect();
    let total: u32 = rolls.iter().sum();
    let text = format!("Rolled {}d{}: {rolls:?}, total {total}", args.count, args.sides);
    CallToolResult::for_view(text, serde_json::json!({"rolls": rolls, "total": total, "sides": args.sides}))
}

/// The view, its two tools, as the demo registers them.
pub(crate) fn view_and_tools() -> (ResourceDef, [ToolDef; 2]) {
    let view = ResourceDef::view(DICE_VIEW, "dice", include_str!("view.html"))
        .title("Dice")
        .description("Draws the dice `roll_dice` rolled; its button rolls again")
        .view_meta(ViewMeta { prefers_border: Some(true), ..ViewMeta::default() });
    let roll_dice = ToolDef::new("roll_dice", |Args(args): Args<DiceArgs>| async move { roll(&args) })
        .description("Roll dice; a host with MCP Apps draws them in a view that can roll again")
        .view(DICE_VIEW);
    let roll_again = ToolDef::new("roll_again", |Args(args): Args<DiceArgs>| async move { roll(&args) })
        .description("Roll the dice again from the dice view (only the view calls it)")
        .view(DICE_VIEW)
        .visibility([Visibility::App]);
    (view, [roll_dice, roll_again])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_face_is_on_the_die_and_the_total_adds_up() {
        for sides in [2, 6, 100] {
            let result = roll(&DiceArgs { count: 20, sides });
            let data = result.structured_content.clone().expect("the view's data");
            let rolls: Vec<u32> = serde_json::from_value(data["rolls"].clone()).unwrap();
            assert_eq!(rolls.len(), 20);
            assert!(rolls.iter().all(|face| (1..=sides).contains(face)), "{rolls:?} on d{sides}");
            assert_eq!(data["total"], rolls.iter().sum::<u32>());
            assert!(result.first_text().is_some_and(|text| text.contains("total")), "text for the model");
        }
    }
}
