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
    GPT-Neo 2.7B: a forward pass of EleutherAI/gpt-neo-2.7B
    as AutoModelForCausalLM builds it (GPTNeoForCausalLM); int64 token ids in, vocabulary logits out.

    32 pre-LayerNorm decoder blocks that alternate global causal attention and local causal
    attention (each token sees only the previous 256 tokens), learned absolute positions, GELU (tanh)
    MLP, final LayerNorm and an LM head tied to the token embedding.

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


model_name = "EleutherAI/gpt-neo-2.7B"
batch_size = 32
sequence_length = 256

# Public hyper-parameters of EleutherAI/gpt-neo-2.7B.
# Dropout rates are left at the config class defaults: the model runs in eval mode, where they do nothing.
HF_CONFIG = {
    "model_type": "gpt_neo",
    "vocab_size": 50257,
    "hidden_size": 2560,
    "num_layers": 32,
    "num_heads": 20,
    "intermediate_size": 10240,
    "max_position_embeddings": 2048,
    # 16 x (global, local): layers 0, 2, 4, ... attend globally; layers 1, 3, 5, ... attend within
    # a window of the previous 256 tokens.
    "attention_types": [[["global", "local"], 16]],
    "window_size": 256,
    "activation_function": "gelu_new",  # GELU, tanh approximation
    "layer_norm_epsilon": 1e-05,
    # Not stated in the catalog: GPTNeoConfig default (lm_head shares the token embedding matrix).
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
