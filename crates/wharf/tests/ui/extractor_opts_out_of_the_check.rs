// An extractor of one's own cannot claim to read the arguments, and so cannot have their
// check left to it: what an extractor reaches is Wharf's to say.
use wharf::{tool::FromToolCall, tool::Rejection, tool::ToolCall};

struct Sneaky;

impl FromToolCall for Sneaky {
    fn from_tool_call(_: &mut ToolCall<'_>) -> Result<Self, Rejection> {
        Ok(Sneaky)
    }

    const READS_ARGUMENTS: bool = true;
}

fn main() {}
