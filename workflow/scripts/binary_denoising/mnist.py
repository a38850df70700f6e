"""Full MNIST through torchvision, fetched on the submit host (paper scale; the training jobs read the files)."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.binary_denoising.data import load_torchvision_mnist

images, labels = load_torchvision_mnist(snakemake.params.root, download=True)
print(f"MNIST: {len(images)} training images in {snakemake.params.root}", file=sys.stderr)
