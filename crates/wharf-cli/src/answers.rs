//! How the commands answer a server's questions: they declare elicitation and sampling, so
//! that servers which ask can be used and checked. Without a person at the terminal they
//! decline elicitation; with one, [`AskingAtTerminal`] asks. Sampling is refused (no model is
//! at hand). Either is said on stderr.

use std::sync::{Arc, Mutex, PoisonError};

use wharf::client::{Answer, ClientHandler};
use wharf::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
    ElicitationCapability, ErrorCode, ErrorObject, JsonObject, SamplingCapability,
};

use crate::ask::{StdTerminal, ask, dismissed};
use crate::browser;
use crate::terminal_text::escaped;

/// Declines every question.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Declining {
    /// Whether to say on stderr what was declined.
    pub(crate) tell: bool,
}

/// What a client that answers elicitation and sampling declares (and `wharf check` too).
pub(crate) fn answering_capabilities() -> ClientCapabilities {
    ClientCapabilities {
        elicitation: Some(ElicitationCapability::default()),
        sampling: Some(SamplingCapability::default()),
        ..ClientCapabilities::default()
    }
}

impl ClientHandler for Declining {
    fn capabilities(&self) -> ClientCapabilities {
        answering_capabilities()
    }

    fn elicit(&self, params: ElicitParams) -> Answer<'_, ElicitResult> {
        if self.tell {
            eprintln!("wharf: the server asked \"{}\"; declined (no one to answer here)", escaped(&params.message));
        }
        Box::pin(async { Ok(ElicitResult { action: ElicitAction::Decline, content: None, meta: None }) })
    }

    fn create_message(&self, _params: CreateMessageParams) -> Answer<'_, CreateMessageResult> {
        refuse_sampling(self.tell)
    }
}

/// Refuses a sampling request: wharf has no model.
fn refuse_sampling(tell: bool) -> Answer<'static, CreateMessageResult> {
    if tell {
        eprintln!("wharf: the server asked for a completion from the client's model; refused (no model here)");
    }
    Box::pin(async {
        Err(ErrorObject::new(ErrorCode(-1), "the user refused the sampling request (wharf has no model)"))
    })
}

/// Asks the person at the terminal each question (one at a time), and opens the pages they
/// agree to open; refuses sampling.
#[derive(Debug, Clone, Default)]
pub(crate) struct AskingAtTerminal {
    /// Held by the thread that asks, so that a question whose request was cancelled still
    /// has the terminal until it is answered.
    one_at_a_time: Arc<Mutex<()>>,
}

impl ClientHandler for AskingAtTerminal {
    fn capabilities(&self) -> ClientCapabilities {
        let mut capabilities = answering_capabilities();
        capabilities.elicitation =
            Some(ElicitationCapability { form: Some(JsonObject::new()), url: Some(JsonObject::new()) });
        capabilities
    }

    fn elicit(&self, params: ElicitParams) -> Answer<'_, ElicitResult> {
        let one_at_a_time = self.one_at_a_time.clone();
        Box::pin(async move {
            let page = params.url.clone().filter(|_| params.mode.as_deref() == Some("url"));
            // Reading the terminal blocks, so it is a thread's own; a detached one, which the
            // runtime does not wait for when the command ends with the question unanswered.
            let (answered, answer) = tokio::sync::oneshot::channel();
            std::thread::spawn(move || {
                let _turn = one_at_a_time.lock().unwrap_or_else(PoisonError::into_inner);
                answered.send(ask(&params, &mut StdTerminal))
            });
            let result = answer.await.unwrap_or_else(|_| dismissed());
            if let (ElicitAction::Accept, Some(page)) = (result.action, page) {
                browser::open(&page);
            }
            Ok(result)
        })
    }

    fn create_message(&self, _params: CreateMessageParams) -> Answer<'_, CreateMessageResult> {
        refuse_sampling(true)
    }
}
