"""A causal-LM fine-tuning loop in the style of the transformers examples and llama-recipes: flash
attention asked for by name, the model on "cuda", bfloat16 weights where the GPU has them."""

import argparse

import torch
from transformers import AutoModelForCausalLM, LlamaConfig


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="flash_attention_2", torch_dtype=torch.float32)
    model.to("cuda")
    model.config.use_cache = False
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, config.vocab_size, (4, 24), generator=torch.Generator().manual_seed(1))
    for step in range(args.steps):
        batch = tokens.to("cuda")
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"step {step} loss {loss.item():.6f}")
    print("attention", model.config._attn_implementation)
    print("FINAL")


if __name__ == "__main__":
    main()
