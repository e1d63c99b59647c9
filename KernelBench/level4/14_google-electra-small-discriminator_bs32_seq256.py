import torch
import torch.nn as nn

try:
    import transformers
except ImportError as exc:
    raise ImportError(
        "level 4 problems need the Hugging Face transformers package: pip install transformers"
    ) from exc


class Model(nn.Module):
    """
    ELECTRA-small discriminator: a forward pass of google/electra-small-discriminator
    as AutoModelForCausalLM builds it (ElectraForCausalLM); int64 token ids in, vocabulary logits out.

    128-wide embeddings (token, position, token type) projected to 256, 12 post-LayerNorm encoder
    blocks with GELU MLP, then ElectraForCausalLM's generator head (dense 256->128, GELU,
    LayerNorm, 128->vocab projection tied to the token embedding). The checkpoint's config is not a
    decoder config, so attention is bidirectional (no causal mask). The discriminator checkpoint has
    no generator head, so in the original that head was freshly initialised as well.

    The architecture is built from the hyper-parameters in HF_CONFIG with random weights: nothing is
    downloaded. The inner model is put in eval mode (as from_pretrained returns it), so dropout is off.
    """

    def __init__(self, model_name, config):
        super().__init__()
        self.model_name = model_name
        hf_config = transformers.AutoConfig.for_model(**dict(config))
        self.model = transformers.AutoModelForCausalLM.from_config(hf_config)
        self.model.eval()

    def forward(self, x):
        """
        Args:
            x: (batch_size, sequence_length) int64 token ids in [0, vocab_size).

        Returns:
            (batch_size, sequence_length, vocab_size) float32 logits.
        """
        # An all-ones attention mask (no padding) gives the same logits as passing none, but spares
        # transformers its padding / packed-sequence checks, which read token values on the host (a
        # device sync, and impossible on the meta device). No KV cache: one full-sequence pass.
        return self.model(input_ids=x, attention_mask=torch.ones_like(x), use_cache=False).logits


model_name = "google/electra-small-discriminator"
batch_size = 32
sequence_length = 256

# Public hyper-parameters of google/electra-small-discriminator.
# Dropout rates are left at the config class defaults: the model runs in eval mode, where they do nothing.
HF_CONFIG = {
    "model_type": "electra",
    "vocab_size": 30522,
    "embedding_size": 128,
    "hidden_size": 256,
    "num_hidden_layers": 12,
    "num_attention_heads": 4,
    "intermediate_size": 1024,
    "hidden_act": "gelu",
    "max_position_embeddings": 512,
    "layer_norm_eps": 1e-12,
    # The checkpoint is an encoder config: ElectraForCausalLM warns and runs without a causal mask.
    "is_decoder": False,
    # Not stated in the catalog: ElectraConfig defaults (2 token types, padding id 0, generator
    # projection shares the token embedding matrix).
    "type_vocab_size": 2,
    "pad_token_id": 0,
    "tie_word_embeddings": True,
    # Eager attention (plain matmul, softmax, matmul): the one backend that all seven level-4
    # architectures implement, and unlike SDPA its result does not depend on which fused kernel a GPU picks.
    "attn_implementation": "eager",
}

vocab_size = HF_CONFIG["vocab_size"]


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, sequence_length))]


def get_init_inputs():
    return [model_name, HF_CONFIG]
