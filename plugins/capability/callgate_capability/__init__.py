"""(package under construction)"""
