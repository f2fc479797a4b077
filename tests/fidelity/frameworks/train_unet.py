"""A denoising trainer in the style of diffusers' examples/unconditional_image_generation: xformers
switched on when asked (on by default here), the UNet on "cuda", a DDPM noise schedule."""

import argparse

import torch
import torch.nn.functional as F
from diffusers import DDPMScheduler, UNet2DModel


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--enable_xformers_memory_efficient_attention", action="store_false")
    args = parser.parse_args()
    torch.manual_seed(0)
    unet = UNet2DModel(sample_size=8, in_channels=3, out_channels=3, layers_per_block=1,
                       block_out_channels=(16, 32), norm_num_groups=8,
                       down_block_types=("DownBlock2D", "AttnDownBlock2D"), up_block_types=("AttnUpBlock2D", "UpBlock2D"))
    if args.enable_xformers_memory_efficient_attention:
        unet.enable_xformers_memory_efficient_attention()
    unet.to("cuda")
    scheduler = DDPMScheduler(num_train_timesteps=100)
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(1)
    images = torch.randn(4, 3, 8, 8, generator=generator)
    for step in range(args.steps):
        clean = images.to("cuda")
        noise = torch.randn(clean.shape, generator=generator).to("cuda")
        timesteps = torch.randint(0, 100, (clean.shape[0],), generator=generator).to("cuda")
        noisy = scheduler.add_noise(clean, noise, timesteps)
        loss = F.mse_loss(unet(noisy, timesteps).sample, noise)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {step} loss {loss.item():.6f}")
    print("FINAL")


if __name__ == "__main__":
    main()
